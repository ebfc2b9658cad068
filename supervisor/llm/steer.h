/* SPDX-License-Identifier: MIT */
/*
 * lgrun's notes in a model request (issue 28): how many items the agent's
 * own array holds (messages, input items, contents), and the body again
 * with the notes at their places. Pure (jansson): the proxy calls it on
 * the request bodies it forwards, HTTP or websocket response.create.
 *
 * A note's at (struct lg_steer_note, below) is the count of items the
 * agent's array held in the request that first carried it; it goes right
 * after items[0..at-1], the same in every later request:
 *  - Anthropic Messages: a text block appended to messages[at-1] when it is
 *    a user message (a string content made a text block first; tool_result
 *    blocks stay first), else a new user message at at;
 *  - Chat Completions: a user message at at (after role "tool" messages);
 *  - Responses: a user message item (input_text) at at; a string input is
 *    made one user message first;
 *  - Gemini, and gemini-cli's Code Assist envelope ({model, project,
 *    request: {contents}}): a text part appended to contents[at-1] when its
 *    role is user (or absent), else a new user content at at.
 * Several notes go each at its own at; notes of one at go together, in the
 * order given (one message or item for them all, Chat: one each). An at
 * past the end (a conversation cut or compacted) is the end.
 */
#ifndef LG_LLM_STEER_H
#define LG_LLM_STEER_H

#include <stdbool.h>
#include <stddef.h>

#include "llm.h"

/*
 * lgrun's word in the model's context (issue 28): a short user-role text
 * the proxy adds to a model request. at: where, as the count of items the
 * agent's own array (messages, input, contents) held in the request that
 * first carried it: the note goes right after items[0..at-1] (a block of
 * the user message at at-1 for Anthropic and Gemini; a new user message or
 * item at at for Chat Completions and Responses), again in every later
 * request of that conversation, so the model's context stays the same.
 */
#define LG_STEER_TEXT_MAX 1024
#define LG_STEER_MAX 8 /* notes of one conversation added at most */
struct lg_steer_note {
	char text[LG_STEER_TEXT_MAX];
	size_t at;
};

/*
 * The count of items of the request's array into *items, and whether it
 * continues a stored response (Responses' previous_response_id: its input
 * holds only the new items) into *stateful. 0, or -EINVAL when the body is
 * not a request of that API (it is then forwarded untouched).
 */
int lg_llm_steer_items(enum lg_llm_api api, const char *body, size_t n,
		       size_t *items, bool *stateful);

/*
 * Is it a request of the agent's own loop: does it declare tools (tools,
 * or request.tools for Code Assist)? An agent's side requests (a title, a
 * routing or next-speaker check) declare none: a new note waits for the
 * loop's next request rather than going where the loop never reads it.
 */
bool lg_llm_steer_agentic(enum lg_llm_api api, const char *body, size_t n);

/*
 * The body with the notes added, into *out (malloc'd, NUL-terminated, its
 * length in *out_len): the rest of the body as it was, keys in their
 * order, compact. A note whose text is empty or not UTF-8 is left out.
 * Returns how many notes were added (*out is set even for 0), -EINVAL when
 * the body is not a request of that API, -ENOMEM.
 */
int lg_llm_steer_apply(enum lg_llm_api api, const char *body, size_t n,
		       const struct lg_steer_note *notes, size_t nnotes,
		       char **out, size_t *out_len);

#endif
