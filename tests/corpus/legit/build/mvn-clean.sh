# A Maven project built before the session; under lgrun `mvn -o clean`
# removes target/. Needs maven-clean-plugin in a local repository: offline,
# there is none unless Debian's libmaven-clean-plugin-java put one in
# /usr/share/maven-repo.
NEEDS="mvn java"
TIMEOUT=120
setup() {
	local repo=/usr/share/maven-repo
	ls -d $repo/org/apache/maven/plugins/maven-clean-plugin/*/ >/dev/null 2>&1 ||
		skip "no maven-clean-plugin in a local repository (offline: nothing to run mvn clean with)"
	mkdir -p proj/src/main/java/demo proj/target/classes/demo
	cat >proj/pom.xml <<'POM'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>demo</groupId><artifactId>demo</artifactId><version>1.0</version>
</project>
POM
	printf 'package demo;\npublic class App { public static void main(String[] a) { System.out.println(55); } }\n' >proj/src/main/java/demo/App.java
	javac -d proj/target/classes proj/src/main/java/demo/App.java
	(cd proj/target/classes && jar cf ../demo-1.0.jar demo)
	export MAVEN_OPTS="-Dmaven.repo.local=$repo"
	manifest src proj/src proj/pom.xml
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
