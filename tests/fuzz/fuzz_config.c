// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the config loader (supervisor/config*.c): any file
 * a user writes, with a profile and an agent's section picked from the
 * input. A load either succeeds or says what is wrong in a message that
 * names the file; it never crashes, leaks or half-applies (a failed load
 * is freed as a whole). The duration and size parsers get the same text.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const profiles[] = { NULL, "ci", "strict", "bulk",
						"x" };
	static const char *const agents[] = { NULL, "claude", "codex", "gemini",
					      "bash" };
	struct lg_config c;
	struct lg_error err = { { 0 } };
	char *text;
	int r;

	if (size < 1)
		return 0;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	lg_config_init(&c);
	r = lg_config_load_string(&c, text, "fuzz.ini", profiles[data[0] % 5],
				  agents[(data[0] / 5) % 5], &err);
	if (r == 0)
		r = lg_config_finish(&c, &err);
	if (r != 0 && (r > 0 || !strstr(err.msg, "fuzz.ini") ||
		       strlen(err.msg) >= sizeof(err.msg)))
		if (!strstr(err.msg, "profile") && !strstr(err.msg, "agent"))
			__builtin_trap(); /* an error that does not say where */
	lg_config_free(&c);
	{
		unsigned long ms;
		uint64_t bytes;
		int e;
		char line[64];

		memcpy(line, text, strnlen(text, sizeof(line) - 1));
		line[strnlen(text, sizeof(line) - 1)] = '\0';
		lg_parse_duration_ms(line, &ms);
		lg_parse_bytes(line, &bytes);
		lg_parse_errno(line, &e);
	}
	free(text);
	return 0;
}
