# A Maven project built before the session (its classes and jar in
# target/); under lgrun `mvn -o clean` removes target/. Offline, it needs
# maven-clean-plugin in a local repository: Debian's
# libmaven-clean-plugin-java (3.2.0) in /usr/share/maven-repo, which the
# project pins; skipped without it. Under a config of one's own ignore
# rules ([ignore] defaults = false: no target/ glob), so that the clean
# verb (java running Maven's launcher) is what lets it through.
NEEDS="mvn java"
TIMEOUT=120
setup() {
	local repo=/usr/share/maven-repo pu
	ls $repo/org/apache/maven/plugins/maven-clean-plugin/3.2.0/*.jar >/dev/null 2>&1 ||
		skip "no maven-clean-plugin in a local repository (offline: Debian's libmaven-clean-plugin-java is not installed)"
	# Debian's repository as the local one, plus the plexus-utils 1.1
	# Maven adds to every plugin's class path (Debian's 3.4.2 under it)
	cp -rL $repo "$META/m2"
	pu=$META/m2/org/codehaus/plexus/plexus-utils
	mkdir -p "$pu/1.1"
	cp "$pu"/3.4.2/plexus-utils-3.4.2.jar "$pu/1.1/plexus-utils-1.1.jar"
	sed 's|<version>3.4.2</version>|<version>1.1</version>|' "$pu"/3.4.2/plexus-utils-3.4.2.pom >"$pu/1.1/plexus-utils-1.1.pom"
	mkdir -p proj/src/main/java/demo proj/target/classes
	cat >proj/pom.xml <<'POM'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>demo</groupId><artifactId>demo</artifactId><version>1.0</version>
  <build><plugins><plugin>
    <groupId>org.apache.maven.plugins</groupId><artifactId>maven-clean-plugin</artifactId>
    <version>3.2.0</version>
  </plugin></plugins></build>
</project>
POM
	printf 'package demo;\npublic class App { public static void main(String[] a) { System.out.println(55); } }\n' >proj/src/main/java/demo/App.java
	javac -d proj/target/classes proj/src/main/java/demo/App.java
	(cd proj/target/classes && jar cf ../demo-1.0.jar demo)
	export MAVEN_OPTS="-Dmaven.repo.local=$META/m2"
	manifest src proj/src proj/pom.xml
	# without the target/ glob: the clean verb decides (issue 41)
	printf '[ignore]\ndefaults = false\n' >"$META/own-ignores.ini"
	LGRUN_ARGS=(--config "$META/own-ignores.ini")
}
run() {
	set -e
	cd proj
	mvn -o -q clean
	test ! -e target
}
verify() {
	none_lost src
}
