// SPDX-License-Identifier: MIT
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agentenv.h"

/* What takes the model traffic around lgrun when a settings file sets it. */
static const char *const defeats[] = {
	"ANTHROPIC_BASE_URL",
	"ANTHROPIC_BEDROCK_BASE_URL",
	"ANTHROPIC_VERTEX_BASE_URL",
	"CLAUDE_CODE_USE_BEDROCK",
	"CLAUDE_CODE_USE_VERTEX",
	"HTTPS_PROXY",
	"https_proxy",
	"HTTP_PROXY",
	"http_proxy",
	"NO_PROXY",
	"no_proxy",
	"NODE_EXTRA_CA_CERTS",
};

static size_t
check_file(const char *path,
	   void (*say)(void *ctx, const char *file, const char *key), void *ctx)
{
	json_t *root = json_load_file(path, 0, NULL), *env;
	size_t n = 0;

	if (!root)
		return 0; /* absent or not JSON: Claude Code says so itself */
	env = json_object_get(root, "env");
	if (json_is_object(env))
		for (size_t i = 0; i < sizeof(defeats) / sizeof(defeats[0]);
		     i++)
			if (json_object_get(env, defeats[i])) {
				say(ctx, path, defeats[i]);
				n++;
			}
	json_decref(root);
	return n;
}

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

const char *lg_agentenv_is_agent(char *const argv[])
{
	static const char *const clis[] = {
		"claude", "codex",	  "gemini", "qwen",    "opencode",
		"aider",  "cursor-agent", "goose",  "copilot",
	};

	for (size_t i = 0; argv && argv[i]; i++) {
		const char *a = argv[i];

		for (size_t k = 0; k < sizeof(clis) / sizeof(clis[0]); k++) {
			size_t n = strlen(clis[k]);

			for (const char *p = strstr(a, clis[k]); p;
			     p = strstr(p + 1, clis[k]))
				if ((p == a || !word_char(p[-1])) &&
				    !word_char(p[n]))
					return clis[k];
		}
	}
	return NULL;
}

size_t lg_agentenv_check(const char *cwd, const char *home,
			 void (*say)(void *ctx, const char *file,
				     const char *key),
			 void *ctx)
{
	static const char *const files[] = { ".claude/settings.json",
					     ".claude/settings.local.json" };
	char path[PATH_MAX + 64];
	size_t n = 0;

	for (size_t i = 0; cwd && cwd[0] == '/' && i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", cwd, files[i]);
		n += check_file(path, say, ctx);
	}
	if (home && home[0] == '/' && (!cwd || strcmp(cwd, home) != 0)) {
		snprintf(path, sizeof(path), "%s/%s", home, files[0]);
		n += check_file(path, say, ctx);
	}
	return n;
}
