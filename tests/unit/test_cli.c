// SPDX-License-Identifier: MIT
/*
 * Unit tests for guard/cli.c: what a command line destroys off this host
 * (issue 38), from the shipped table and the config's own lines.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "guard/cli.h"

static struct lg_cli_table *table;

/* "target;target" of a command line (words split at spaces), or "-". */
static const char *classify(const char *line)
{
	static char out[1200];
	char buf[512], *argv[32], *save = NULL;
	struct lg_cli_match m;
	const char *prog;
	int argc = 0;
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	/* ^ joins the words of one argument: psql -c DROP^TABLE^t */
	for (char *w = strtok_r(buf, " ", &save); w && argc < 31;
	     w = strtok_r(NULL, " ", &save)) {
		for (char *c = w; *c; c++)
			if (*c == '^')
				*c = ' ';
		argv[argc++] = w;
	}
	argv[argc] = NULL;
	prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	if (!lg_cli_classify(table, prog, argc, (const char *const *)argv,
			     "/work/infra", &m))
		return "-";
	out[0] = '\0';
	for (unsigned i = 0; i < m.n; i++)
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s%s",
				      i ? ";" : "", m.made[i] ? "+" : "",
				      m.targets[i]);
	if (m.wire)
		snprintf(out + n, sizeof(out) - n, " (wire)");
	return out;
}

static int setup(void **state)
{
	struct lg_error err = { 0 };

	(void)state;
	table = lg_cli_table_new("mytool purge -> next; other ** wipe", &err);
	return table ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	lg_cli_table_free(table);
	return 0;
}

static void test_the_floor(void **state)
{
	(void)state;
	assert_string_equal(classify("kubectl delete pod web-1"),
			    "kubectl: pod web-1");
	assert_string_equal(classify("kubectl -n prod delete ns shop"),
			    "kubectl: ns shop");
	assert_string_equal(classify("kubectl delete -f app.yaml"),
			    "kubectl: app.yaml");
	assert_string_equal(classify("helm uninstall shop"), "helm: shop");
	assert_string_equal(classify("terraform destroy -auto-approve"),
			    "terraform: /work/infra");
	assert_string_equal(classify("tofu apply -destroy"),
			    "tofu: /work/infra");
	assert_string_equal(classify("terraform state rm aws_s3_bucket.b"),
			    "terraform: aws_s3_bucket.b");
	assert_string_equal(classify("aws s3 rm s3://bucket/key --recursive"),
			    "aws: s3://bucket/key");
	assert_string_equal(classify("aws s3 rb s3://bucket"),
			    "aws: s3://bucket");
	assert_string_equal(
		classify("aws dynamodb delete-table --table-name t"), "aws: t");
	assert_string_equal(
		classify("gcloud compute instances delete vm-1 --quiet"),
		"gcloud: vm-1");
	assert_string_equal(classify("az group delete --name rg"), "az: rg");
	assert_string_equal(classify("gh repo delete me/x --yes"), "gh: me/x");
	assert_string_equal(classify("gh release delete v1"), "gh: v1");
	assert_string_equal(classify("git push --force origin main"),
			    "git: origin main");
	assert_string_equal(classify("git push origin +main"),
			    "git: origin +main");
	assert_string_equal(classify("git push origin :old"),
			    "git: origin :old");
	assert_string_equal(classify("git push --delete origin old"),
			    "git: origin old");
	assert_string_equal(classify("docker rm -f web"), "docker: web");
	assert_string_equal(classify("docker volume rm data"), "docker: data");
	assert_string_equal(classify("podman system prune -a"),
			    "podman: system prune");
	assert_string_equal(classify("redis-cli -h 10.0.0.5 FLUSHALL"),
			    "redis-cli: *");
	assert_string_equal(
		classify("redis-cli -p 6380 -n 2 del user:1 user:2"),
		"redis-cli: user:1;redis-cli: user:2");
	assert_string_equal(classify("dropdb -h db -U app shop"),
			    "dropdb: shop (wire)");
	assert_string_equal(
		classify("curl -s -X DELETE http://127.0.0.1:8080/items/3?x=1"),
		"http://127.0.0.1:8080/items/3 (wire)");
	assert_string_equal(
		classify("curl --request=DELETE https://api.example/items/3"),
		"https://api.example/items/3");
	assert_string_equal(classify("wget --method=DELETE http://h/x"),
			    "http://h/x (wire)");
	assert_string_equal(classify("http DELETE http://h/x"),
			    "http://h/x (wire)");
	/* the config's own lines */
	assert_string_equal(classify("mytool purge cache-a cache-b"),
			    "mytool: cache-a");
	assert_string_equal(classify("other a b c wipe now"), "other: now");
}

/* What the session makes: its own from then on ("+") */
static void test_making(void **state)
{
	(void)state;
	assert_string_equal(classify("kubectl apply -f app.yaml"),
			    "+kubectl: app.yaml");
	assert_string_equal(classify("kubectl create deployment web --image=x"),
			    "+kubectl: deployment web");
	assert_string_equal(classify("kubectl delete deployment web"),
			    "kubectl: deployment web");
	assert_string_equal(classify("docker run -d --name web nginx"),
			    "+docker: web");
	assert_string_equal(classify("docker run --name=db postgres"),
			    "+docker: db");
	assert_string_equal(classify("docker run --rm alpine true"), "-");
	assert_string_equal(classify("helm install shop ./chart"),
			    "+helm: shop");
	assert_string_equal(classify("terraform apply -auto-approve"),
			    "+terraform: /work/infra");
	assert_string_equal(classify("terraform apply -destroy"),
			    "terraform: /work/infra");
	assert_string_equal(classify("gh repo create me/x --private"),
			    "+gh: me/x");
	assert_string_equal(classify("redis-cli SET session:1 v"),
			    "+redis-cli: session:1");
	assert_string_equal(classify("redis-cli mset a 1 b 2"),
			    "+redis-cli: a;+redis-cli: b");
}

static void test_sql_clients(void **state)
{
	(void)state;
	assert_string_equal(
		classify(
			"psql -h 127.0.0.1 -p 5432 -d shop -c DROP^TABLE^t1,^t2"),
		"psql://127.0.0.1:5432/shop/t1;psql://127.0.0.1:5432/shop/t2 (wire)");
	assert_string_equal(classify("psql -qc DELETE^FROM^orders"),
			    "psql://?:?/?/orders (wire)");
	assert_string_equal(classify("psql -c CREATE^TABLE^x^(a^int)"),
			    "+psql://?:?/?/x (wire)");
	assert_string_equal(classify("psql -c DROP^DATABASE^scratch"),
			    "psql://?:?/scratch (wire)");
	assert_string_equal(classify("mysql -e TRUNCATE^TABLE^logs -D app"),
			    "mysql://?:?/app/logs (wire)");
	assert_string_equal(
		classify(
			"mariadb -h 127.0.0.1 -P 3306 -u root shop -e DROP^TABLE^t1"),
		"mariadb://127.0.0.1:3306/shop/t1 (wire)");
	assert_string_equal(classify("sqlite3 app.db DROP^TABLE^users"),
			    "sqlite:app.db/users");
	assert_string_equal(classify("mongosh --eval db.users.drop()"),
			    "mongosh://?:?/?/users");
	/* not destructive */
	assert_string_equal(classify("psql -c SELECT^1"), "-");
	assert_string_equal(classify("psql -c DELETE^FROM^t^WHERE^id=1"), "-");
	assert_string_equal(classify("psql -f migrate.sql"), "-");
	assert_string_equal(classify("sqlite3 app.db .tables"), "-");
}

static void test_not_destructive(void **state)
{
	(void)state;
	assert_string_equal(classify("kubectl get pods"), "-");
	assert_string_equal(classify("kubectl logs delete-job"), "-");
	assert_string_equal(classify("kubectl delete pod x --dry-run=client"),
			    "-");
	assert_string_equal(classify("kubectl delete --help"), "-");
	assert_string_equal(classify("terraform plan -destroy"), "-");
	assert_string_equal(classify("aws s3 rm s3://b/k --dryrun"), "-");
	assert_string_equal(classify("aws s3 ls"), "-");
	assert_string_equal(classify("git: origin main"), "-");
	assert_string_equal(classify("git push -u origin feature"), "-");
	assert_string_equal(classify("git commit -m delete"), "-");
	assert_string_equal(classify("docker run --rm alpine true"), "-");
	assert_string_equal(classify("docker ps -a"), "-");
	assert_string_equal(classify("redis-cli get user:1"), "-");
	assert_string_equal(classify("redis-cli"), "-");
	assert_string_equal(classify("redis-cli -h del"), "-");
	assert_string_equal(classify("curl -s http://h/items/3"), "-");
	assert_string_equal(classify("curl -X POST http://h/items"), "-");
	assert_string_equal(classify("ls -la"), "-");
	assert_string_equal(classify("kubectl"), "-");
	assert_string_equal(classify("helm"), "-");
}

static void test_bad_lines(void **state)
{
	struct lg_error err = { 0 };

	(void)state;
	assert_null(lg_cli_table_new("x y -> nowhere", &err));
	assert_non_null(strstr(err.msg, "cannot read 'x y -> nowhere'"));
	assert_null(lg_cli_table_new(" -> rest", &err));
	assert_null(lg_cli_table_new("x y -> opt=name", &err));
	lg_cli_table_free(lg_cli_table_new("x y -> +opt=--name", &err));
	lg_cli_table_free(lg_cli_table_new(" ; ;", &err));
	assert_true(lg_cli_known(table, "kubectl"));
	assert_true(lg_cli_known(table, "mytool"));
	assert_false(lg_cli_known(table, "make"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_floor),
		cmocka_unit_test(test_making),
		cmocka_unit_test(test_sql_clients),
		cmocka_unit_test(test_not_destructive),
		cmocka_unit_test(test_bad_lines),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
