// SPDX-License-Identifier: MIT
/*
 * Ending a streamed response where it stands, as the API itself ends one:
 * lgrun cuts a response whose text loops (output_repeat), and the agent
 * must take what it got as a complete answer, not as a broken connection it
 * retries. Per API, the events its end takes from the state the stream
 * left (api.h): the open block or item closed, the stop said, the end
 * marker. Pure, like llm.c.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "api.h"

/*
 * One SSE event: "event: NAME\n" (NAME may be NULL), "data: JSON", eol
 * twice. ev is taken. Each API's close (api.h) writes its events with it.
 */
int llm_put_event(struct buf *b, const char *name, json_t *ev, const char *eol)
{
	LG_AUTOFREE char *data = NULL;
	int err = 0;

	if (!ev)
		return -ENOMEM;
	data = json_dumps(ev, JSON_COMPACT);
	json_decref(ev);
	if (!data)
		return -ENOMEM;
	if (name) {
		err = llm_buf_add(b, "event: ", 7, LLM_BODY_MAX);
		if (!err)
			err = llm_buf_add(b, name, strlen(name), LLM_BODY_MAX);
		if (!err)
			err = llm_buf_add(b, "\n", 1, LLM_BODY_MAX);
	}
	if (!err)
		err = llm_buf_add(b, "data: ", 6, LLM_BODY_MAX);
	if (!err)
		err = llm_buf_add(b, data, strlen(data), LLM_BODY_MAX);
	if (!err)
		err = llm_buf_add(b, eol, strlen(eol), LLM_BODY_MAX);
	if (!err)
		err = llm_buf_add(b, eol, strlen(eol), LLM_BODY_MAX);
	return err;
}

bool lg_llm_stream_can_close(const struct lg_llm_stream *s)
{
	/*
	 * whole events only: no part of one went out without its end.
	 * started says the API's close has what it takes (Responses: its
	 * response object, kept, else cannot_close).
	 */
	return s && s->mode == M_SSE && s->started && !s->ended &&
	       !s->cannot_close && !s->line.n && !s->line_bad && !s->has_data &&
	       !lg_llm_stream_call_open(s);
}

int lg_llm_stream_close(const struct lg_llm_stream *s, char **out, size_t *len)
{
	struct buf b = { 0 };
	int err;

	*out = NULL;
	*len = 0;
	if (!lg_llm_stream_can_close(s))
		return -EINVAL;
	err = llm_api(s->api)->close(s, &b);
	if (err < 0) {
		llm_buf_free(&b);
		return err;
	}
	*out = b.p;
	*len = b.n;
	return 0;
}
