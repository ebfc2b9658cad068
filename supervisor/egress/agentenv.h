/* SPDX-License-Identifier: MIT */
/*
 * Settings files of agent CLIs that replace the environment lgrun gives
 * the agent: Claude Code applies the "env" block of its settings files
 * over its environment, so a base-URL, proxy or CA variable there takes
 * its model traffic around lgrun. Named at start, never changed.
 */
#ifndef LG_AGENTENV_H
#define LG_AGENTENV_H

#include <stddef.h>

/*
 * Looks at .claude/settings.json and .claude/settings.local.json in cwd
 * (the project's, when Claude Code starts there) and home's
 * .claude/settings.json (the user's). say() is
 * called for each variable found that defeats lgrun, with the file. The
 * number of them.
 */
size_t lg_agentenv_check(const char *cwd, const char *home,
			 void (*say)(void *ctx, const char *file,
				     const char *key),
			 void *ctx);

/*
 * Whether a command line runs an agent CLI lgrun knows (Claude Code,
 * Codex, gemini-cli and others): a word of one of its arguments is the
 * CLI's name ("codex", "timeout 90 codex exec", "npx @openai/codex",
 * "sh -c 'exec claude -p ...'"). Pure. The name, or NULL.
 */
const char *lg_agentenv_is_agent(char *const argv[]);

#endif
