/* SPDX-License-Identifier: MIT */
/*
 * Understanding model APIs as the LLM proxy forwards them: pure parsers
 * (jansson) for Anthropic Messages, OpenAI Responses and Chat Completions,
 * and Gemini generateContent / streamGenerateContent. Responses are fed as
 * they stream (SSE) or whole (JSON); what they say comes out through
 * callbacks. Requests are read whole, for the tool results they carry.
 */
#ifndef LG_LLM_H
#define LG_LLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The model APIs: one line each in apis.def; LG_LLM_COUNT past the last. */
enum lg_llm_api {
	LG_LLM_UNKNOWN,
#define LG_LLM_API(NAME, TABLE) LG_LLM_##NAME,
#include "apis.def"
#undef LG_LLM_API
	LG_LLM_COUNT
};

/* A tool call the model made, complete (arguments fully streamed). */
struct lg_llm_call {
	const char *id; /* tool_use id, call_id, or "" (Gemini has none) */
	const char *name;
	const char *input; /* the arguments as JSON text ("{}" when none) */
};

/* A tool result the agent sends back in its next request. */
struct lg_llm_result {
	const char *call_id; /* matches lg_llm_call.id; Gemini: "" */
	const char *name; /* Gemini functionResponse name; else "" */
	const char *content; /* the result as text or JSON text */
	bool is_error;
};

struct lg_llm_turn {
	const char *model; /* "" when the response did not say */
	const char *stop_reason; /* end_turn, tool_use, max_tokens, ... */
	uint64_t input_tokens, output_tokens;
	unsigned tool_calls; /* made in this turn */
};

struct lg_llm_sink {
	void (*tool_call)(void *ctx, const struct lg_llm_call *c);
	void (*text)(void *ctx, const char *delta, size_t n);
	/* once per response, at its end */
	void (*turn)(void *ctx, const struct lg_llm_turn *t);
	void *ctx;
};

/*
 * Which API a request is, from the proxy route (one an API is spoken on)
 * and the path after it (the end of one of an API's paths, whatever the
 * route: compatible endpoints).
 */
enum lg_llm_api lg_llm_api_of(const char *route, const char *path);

/* The API is spoken over a websocket too (Codex's Responses). */
bool lg_llm_api_websocket(enum lg_llm_api api);

struct lg_llm_stream;

/*
 * A response parser. sse: the body is text/event-stream, else one JSON
 * document (a body whose first non-blank byte is '{' or '[' is read as JSON
 * either way: an error answer to a streamed request, Gemini's stream
 * without alt=sse). Bytes may arrive cut anywhere. Never fails loudly: what
 * it cannot parse is counted (lg_llm_stream_errors) and skipped. NULL for
 * LG_LLM_UNKNOWN; every function accepts a NULL stream.
 */
struct lg_llm_stream *lg_llm_stream_new(enum lg_llm_api api, bool sse,
					const struct lg_llm_sink *sink);
void lg_llm_stream_feed(struct lg_llm_stream *s, const char *p, size_t n);
/* The response is complete: flushes and reports the turn (once). */
void lg_llm_stream_end(struct lg_llm_stream *s);
unsigned lg_llm_stream_errors(const struct lg_llm_stream *s);
/* A tool call has started streaming and is not complete yet. */
bool lg_llm_stream_call_open(const struct lg_llm_stream *s);
/*
 * An error as one SSE event of that API's stream (what its SDKs raise on),
 * for ending a response whose tool call lgrun withholds. Returns the
 * length, or -ENOSPC / -ENOMEM.
 */
int lg_llm_stream_error_event(enum lg_llm_api api, const char *message,
			      char *out, size_t size);
void lg_llm_stream_free(struct lg_llm_stream *s);

/*
 * Can lgrun end the response here, as a complete one (output_repeat cuts a
 * looping response)? An SSE stream whose start was seen, fed whole events
 * only, not ended, with no tool call open (its arguments would be lost).
 */
bool lg_llm_stream_can_close(const struct lg_llm_stream *s);
/*
 * The SSE events that end the response where it stands, in the API's own
 * framing, so that its client takes it as complete: Anthropic the open
 * block's content_block_stop, a message_delta (end_turn; tool_use when a
 * call was made) and message_stop; Chat a chunk with its finish_reason and
 * [DONE]; Responses the open message item's done events and a
 * response.completed holding the output so far; Gemini (and Code Assist) a
 * chunk with finishReason STOP. Nothing for what the stream ended already.
 * *out is malloc'ed (NULL when nothing is needed). 0, -EINVAL when it
 * cannot be closed (lg_llm_stream_can_close), or -ENOMEM.
 */
int lg_llm_stream_close(const struct lg_llm_stream *s, char **out, size_t *len);

/*
 * Reads a request body: calls fn for every tool result it carries, in
 * order, and copies the model name into model (may be NULL). Returns the
 * number of results, or -EINVAL when the body is not JSON of that API.
 */
int lg_llm_request_results(enum lg_llm_api api, const char *body, size_t n,
			   void (*fn)(void *ctx, const struct lg_llm_result *r),
			   void *ctx, char *model, size_t model_size);

/*
 * Like lg_llm_request_results, but only the results that answer the last
 * model turn: those after the last model message that made tool calls
 * (Responses: from the first model item of the run around the last call,
 * its outputs may come between calls; all results when the request holds
 * no call, e.g. continuing with previous_response_id). Every request
 * repeats the whole conversation, so
 * older results come again; with ids they match no pending call, but
 * Gemini's results carry no id and can only be matched by name and place.
 */
int lg_llm_request_last_results(enum lg_llm_api api, const char *body, size_t n,
				void (*fn)(void *ctx,
					   const struct lg_llm_result *r),
				void *ctx, char *model, size_t model_size);

/* Whether the request asks for a streamed response. */
bool lg_llm_request_streams(enum lg_llm_api api, const char *path,
			    const char *body, size_t n);

/*
 * The body of an error response in the API's own format, with message (a
 * user-facing explanation), and the HTTP status to send it with. Returns
 * the length, or -ENOSPC.
 */
int lg_llm_error_body(enum lg_llm_api api, const char *message, char *out,
		      size_t size, int *status);

#endif
