// SPDX-License-Identifier: MIT
/*
 * Greeting: in the middle of a task the model answers "Hello! How can I
 * help you today?" as if the conversation had just started. That is a
 * model that lost its context (a truncated or reset history, a proxy or
 * client that dropped the messages), and whatever it does next is not the
 * task it was given.
 *
 * Only consulted on a turn that follows a turn with tool calls (a greeting
 * as the first answer is what a greeting is for), that made no tool call
 * itself, and whose whole text is a greeting: short (at most GREETING_MAX
 * bytes once trimmed), and made only of openers ("hello", "hi there"),
 * offers of help from a narrow list ("how can I help", "what would you
 * like to work on") and a few words that may follow an offer ("you",
 * "today", "with your code"), in any case, with punctuation and emoji
 * between them. "Anything else I can help with?" after finished work is
 * not on the list ("else" is not a word an offer may end with), and nor is
 * any answer that says something about the work.
 *
 * A greeting tells the model to resume its task (seed 004). With action
 * deny or kill, the session's first steer_at greetings only warn, so the
 * model hears that first; the action applies from the next one on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/text.h"
#include "detectors.h"

#define GREETING_MAX 200 /* bytes, trimmed */
#define MAX_WORDS 48
#define WORD_MAX 24

struct lg_greeting {
	struct lg_greeting_cfg cfg;
	uint64_t turns;
	unsigned prev_calls; /* tool calls of the previous turn */
	uint64_t fired; /* greetings found in the session */
};

struct lg_greeting *lg_greeting_new(const struct lg_greeting_cfg *cfg)
{
	struct lg_greeting *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->cfg = *cfg;
	return d;
}

void lg_greeting_free(struct lg_greeting *d)
{
	free(d);
}

/* Phrases, as lower-case words separated by single spaces. */
static const char *const openers[] = {
	"hello",	"hello there",	"hi",
	"hi there",	"hey",		"hey there",
	"greetings",	"good morning", "good afternoon",
	"good evening", "welcome",	"welcome back",
	"howdy",	"hiya",		"hello again",
	"hi again",
};

static const char *const offers[] = {
	"how can i help",
	"how may i help",
	"how can i assist",
	"how may i assist",
	"how can i be of assistance",
	"how can i be of help",
	"what can i do for you",
	"what can i help you with",
	"what can i help with",
	"what would you like to do",
	"what would you like me to do",
	"what would you like to work on",
	"what would you like help with",
	"what do you need help with",
	"what do you want to work on",
	"what are we working on",
	"what shall we work on",
	"i'm ready to help",
	"i am ready to help",
	"i'm ready to assist",
	"i'm here to help",
	"i am here to help",
	"i'm happy to help",
	"i'd be happy to help",
	"i'm an ai assistant",
	"let me know what you need",
	"let me know how i can help",
};

/* Words an offer may end with: "how can I help you with your code today". */
static const char *const tails[] = {
	"you",	 "today", "with",    "your",	"code",	     "coding",
	"now",	 "on",	  "project", "any",	"questions", "need",
	"tasks", "task",  "get",     "started",
};

struct words {
	size_t n;
	char w[MAX_WORDS][WORD_MAX];
};

/* Characters that may sit between words: punctuation, emoji. */
static bool between(const unsigned char *p, size_t *len)
{
	static const char punct[] = " \t\r\n.,!?;:-";
	uint32_t c;

	*len = lg_utf8_seq_len(p);
	if (*len == 1)
		return strchr(punct, *p) != NULL;
	if (*len == 0)
		return false;
	c = *len == 2 ? (uint32_t)(p[0] & 0x1f) << 6 | (p[1] & 0x3f) :
	    *len == 3 ? (uint32_t)(p[0] & 0x0f) << 12 |
				(uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f) :
			(uint32_t)(p[0] & 0x07) << 18 |
				(uint32_t)(p[1] & 0x3f) << 12 |
				(uint32_t)(p[2] & 0x3f) << 6 | (p[3] & 0x3f);
	return c == 0x2026 || /* … */
	       c == 0x2013 || c == 0x2014 || /* – — */
	       c == 0x00a0 || /* no-break space */
	       (c >= 0x2600 && c <= 0x27bf) || /* symbols, dingbats */
	       (c >= 0x1f000 && c <= 0x1faff) || /* emoji */
	       c == 0xfe0f || c == 0x200d; /* emoji presentation, ZWJ */
}

/*
 * Lower-case words of letters and apostrophes (’ is one); false when the
 * text holds anything else (digits, code, paths, other scripts) or is too
 * long.
 */
static bool split(const char *text, struct words *out)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t len;

	out->n = 0;
	while (*p) {
		size_t n = 0;

		if (between(p, &len)) {
			p += len;
			continue;
		}
		if (out->n == MAX_WORDS)
			return false;
		for (;;) {
			char c;

			if ((*p >= 'a' && *p <= 'z') ||
			    (*p >= 'A' && *p <= 'Z')) {
				c = (char)(*p | 0x20);
				p++;
			} else if (*p == '\'') {
				c = '\'';
				p++;
			} else if (p[0] == 0xe2 && p[1] == 0x80 &&
				   p[2] == 0x99) {
				c = '\'';
				p += 3;
			} else {
				break;
			}
			if (n + 1 >= WORD_MAX)
				return false;
			out->w[out->n][n++] = c;
		}
		if (!n)
			return false; /* neither a word nor between words */
		out->w[out->n++][n] = '\0';
	}
	return true;
}

/* The number of words of the longest phrase in list at word i, or 0. */
static size_t match(const struct words *ws, size_t i, const char *const *list,
		    size_t n)
{
	size_t best = 0;

	for (size_t k = 0; k < n; k++) {
		const char *s = list[k];
		size_t j = i;

		while (j < ws->n) {
			size_t l = strlen(ws->w[j]);

			if (strncmp(s, ws->w[j], l) != 0 ||
			    (s[l] != ' ' && s[l] != '\0'))
				break;
			j++;
			s += l;
			if (!*s)
				break;
			s++;
		}
		if (!*s && j - i > best)
			best = j - i;
	}
	return best;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* text without outer whitespace into buf; false when empty or too long. */
static bool trimmed(const char *text, char buf[GREETING_MAX + 1])
{
	const char *b, *e;

	if (!text)
		return false;
	for (b = text; is_space(*b); b++)
		;
	for (e = b + strlen(b); e > b && is_space(e[-1]); e--)
		;
	if (e == b || (size_t)(e - b) > GREETING_MAX)
		return false;
	memcpy(buf, b, (size_t)(e - b));
	buf[e - b] = '\0';
	return true;
}

bool lg_greeting_match(const char *text)
{
	char buf[GREETING_MAX + 1];
	struct words ws;
	bool offered = false;
	size_t i = 0;

	if (!trimmed(text, buf) || !split(buf, &ws))
		return false;
	while (i < ws.n) {
		size_t n = match(&ws, i, offers, N(offers));

		if (n) {
			offered = true;
		} else if ((n = match(&ws, i, openers, N(openers)))) {
			;
		} else if (offered && match(&ws, i, tails, N(tails))) {
			n = 1;
		} else {
			return false;
		}
		i += n;
	}
	return offered;
}

enum lg_verdict lg_greeting_feed(struct lg_greeting *d,
				 const struct lg_event *ev,
				 const struct lg_guard_env *env,
				 struct lg_findings *out)
{
	char buf[GREETING_MAX + 1], preview[GREETING_MAX + 4];
	unsigned prev;

	(void)env;
	if (!d->cfg.enabled || ev->kind != LG_EV_TURN)
		return LG_ALLOW;
	prev = d->prev_calls;
	d->prev_calls = ev->turn_tool_calls;
	d->turns++;
	if (!prev || ev->turn_tool_calls || !lg_greeting_match(ev->turn_text))
		return LG_ALLOW;
	trimmed(ev->turn_text, buf); /* it matched: not empty, short */
	lg_preview(buf, preview, sizeof(preview), 100);
	return lg_findings_fire(
		out, d->cfg.action, d->cfg.steer_at, ++d->fired, "greeting",
		"context_lost",
		"context_lost, model turn #%llu answered \"%s\" right after a turn with %u tool call%s: the model may have lost its context",
		(unsigned long long)d->turns, preview, prev,
		prev == 1 ? "" : "s");
}

LG_DETECTOR_DEFINE(greeting);
