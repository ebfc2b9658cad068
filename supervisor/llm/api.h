/* SPDX-License-Identifier: MIT */
/*
 * Inside llm.c: the stream's state and the helpers every model API's file
 * uses (anthropic.c, responses.c, chat.c, gemini.c), and
 * the table each of them fills. A new API is its own file with its struct
 * llm_api, and one case in llm_api() (llm.c). Pure, like llm.c.
 */
#ifndef LG_LLM_API_H
#define LG_LLM_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llm.h"

/*
 * One SSE line, and the data of one event. The biggest event a provider
 * sends is OpenAI's response.completed, which repeats the whole response.
 */
#define LLM_LINE_MAX (1u << 20)
/* Tool arguments being streamed: all open calls of one stream together. */
#define LLM_ARGS_MAX (1u << 20)
/* A whole JSON body: a non-streamed response, Gemini's JSON array. */
#define LLM_BODY_MAX (4u << 20)
/* Tool calls streamed side by side (Chat interleaves parallel calls). */
#define LLM_MAX_OPEN 64
/* Buffers bigger than this are given back once they are empty again. */
#define LLM_KEEP (64u << 10)

struct buf {
	char *p;
	size_t n, cap;
};

/* A tool call whose arguments are still streaming. */
struct call {
	bool open, broken;
	long long index; /* Anthropic block index, Chat tool_calls index */
	char *id, *name;
	char *start; /* Anthropic: the input of content_block_start */
	struct buf args;
};

enum mode { M_UNDECIDED, M_SSE, M_JSON };

struct lg_llm_stream {
	enum lg_llm_api api;
	struct lg_llm_sink sink;
	enum mode mode;
	bool sse_hint, ended, turned;
	unsigned errors;
	/* before the mode is known: how much of a UTF-8 BOM was seen */
	unsigned bom;
	bool pre_blank;
	/* SSE framing */
	struct buf line, data;
	bool cr, line_bad, data_bad, has_data;
	char event[64];
	/* one JSON document */
	struct buf body;
	bool body_bad;
	/* tool calls being streamed */
	struct call calls[LLM_MAX_OPEN];
	size_t args_held;
	long long last_index;
	/* the turn */
	char model[256], stop[64];
	uint64_t in[3], out[2]; /* the parts each API reports, summed */
	unsigned ncalls;
	unsigned responses_open; /* Responses: function_call items added, not done */
	/*
	 * What ending the response where it stands takes (close.c): what the
	 * stream said of itself, and what it left open.
	 */
	bool started; /* its first event (message_start, response.created...) */
	bool finished; /* its end: message_stop, [DONE], finishReason, ... */
	bool stop_said; /* Anthropic: a message_delta with its stop_reason */
	bool cannot_close; /* something lgrun could not keep (a limit) */
	long long open_block; /* Anthropic: started, not stopped (-1: none) */
	char id[128]; /* Chat's chunk id, Gemini's responseId */
	long long created; /* Chat */
	bool wrapped; /* Gemini: Code Assist's {response, traceId} */
	char trace[128]; /* its traceId */
	long long seq; /* Responses: the last sequence_number */
	json_t *response; /* Responses: response.created's object */
	json_t *items; /* Responses: the output items done, in order */
	json_t *item; /* Responses: the message item open, or NULL */
	long long item_index, part_index; /* its output_index, content_index */
	struct buf item_text; /* Responses: its text so far */
};

struct llm_results {
	void (*fn)(void *ctx, const struct lg_llm_result *r);
	void *ctx;
	int n;
};

const char *llm_jstr(const json_t *o, const char *key);
bool llm_jtrue(const json_t *o, const char *key);
bool llm_jcount(const json_t *o, const char *key, uint64_t *out);
char *llm_dump(const json_t *v);
char *llm_dump_string(const char *raw, size_t n);
void llm_set_str(char *dst, size_t size, const char *src);
void llm_emit_text(struct lg_llm_stream *s, const json_t *v);
void llm_emit_call(struct lg_llm_stream *s, const char *id, const char *name,
		   char *input);
void llm_report_turn(struct lg_llm_stream *s);
char *llm_args_text(struct lg_llm_stream *s, const char *raw, size_t n);
struct call *llm_call_find(struct lg_llm_stream *s, long long index);
struct call *llm_call_find_id(struct lg_llm_stream *s, const char *id);
struct call *llm_call_open(struct lg_llm_stream *s, long long index);
void llm_call_set(char **dst, const char *src);
void llm_call_args(struct lg_llm_stream *s, struct call *c, const char *p,
		   size_t n);
void llm_call_finish(struct lg_llm_stream *s, struct call *c);
void llm_calls_finish(struct lg_llm_stream *s);
void llm_calls_drop(struct lg_llm_stream *s);
char *llm_content_text(const json_t *c);
void llm_result(struct llm_results *rs, const char *id, const char *name,
		char *content, bool is_error);
bool llm_has_type(const json_t *array, const char *type);
int llm_buf_add(struct buf *b, const char *p, size_t n, size_t max);
void llm_buf_free(struct buf *b);
json_t *llm_parse(const char *p, size_t n);

/* What one model API is, for the stream and for the requests. */
struct llm_api {
	/* one streamed event (its SSE name, or NULL) or a whole body */
	void (*event)(struct lg_llm_stream *s, const json_t *v,
		      const char *name);
	bool arrays; /* event() takes a JSON array too (Gemini's body) */
	/* the request's messages (an array), NULL when it holds none */
	const json_t *(*messages)(const json_t *root);
	/* a message (item) of the request carries a tool call of the model */
	bool (*makes_calls)(const json_t *m);
	/* Responses: an input item is part of the model's turn (or NULL) */
	bool (*in_turn)(const json_t *m);
	/* the tool results a message (item) carries */
	void (*results)(struct llm_results *rs, const json_t *m);
	/* the error answer whose message is msg (taken) */
	json_t *(*error_body)(json_t *msg);
	/* a streamed error event into ev; err holds the message */
	void (*error_event)(json_t *ev, json_t *err, const char *message);
	const char *error_event_name; /* its SSE event name, or NULL */
};

extern const struct llm_api llm_anthropic, llm_responses, llm_chat, llm_gemini;
/* The table of api; NULL for LG_LLM_UNKNOWN. */
const struct llm_api *llm_api(enum lg_llm_api api);

#endif
