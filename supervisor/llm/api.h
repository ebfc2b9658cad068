/* SPDX-License-Identifier: MIT */
/*
 * Inside llm/: the stream's state and the helpers every model API's file
 * uses (anthropic.c, responses.c, chat.c, gemini.c), and
 * the table each of them fills. A new API is its own file with its struct
 * llm_api, and its line in apis.def. Pure, like llm.c.
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

/* lgrun's notes of one at, to place (steer.c): the text a JSON string. */
struct llm_note {
	size_t at, order;
	json_t *text;
};

/*
 * What one model API is: everything lgrun knows of it, the only place it
 * is known. Its own file fills every member; apis.def puts it in the
 * table (llm_api()).
 */
struct llm_api {
	const char *name; /* for people: "anthropic-messages" */
	/* the proxy route its clients come by (proxy/routes.c's builtin[]) */
	const char *route;
	/* the ends of its request paths (NULL-terminated), on any route */
	const char *const *paths;
	bool websocket; /* spoken over a websocket too (Codex) */

	/* the response: one streamed event (its SSE name, or NULL) or a body */
	void (*event)(struct lg_llm_stream *s, const json_t *v,
		      const char *name);
	bool arrays; /* event() takes a JSON array too (Gemini's body) */
	/* the stream ended: its open calls (llm_calls_drop, llm_calls_finish) */
	void (*end)(struct lg_llm_stream *s);
	/* the events that end the response where it stands (close.c) */
	int (*close)(const struct lg_llm_stream *s, struct buf *b);

	/* the request: whether it asks for a stream */
	bool (*streams)(const char *path, const char *body, size_t n);
	/* the request's messages (an array), NULL when it holds none */
	const json_t *(*messages)(const json_t *root);
	/* a message (item) of the request carries a tool call of the model */
	bool (*makes_calls)(const json_t *m);
	/* where the messages answering the last turn start (llm_after_calls) */
	size_t (*last_turn)(const struct llm_api *a, const json_t *msgs);
	/* the tool results a message (item) carries */
	void (*results)(struct llm_results *rs, const json_t *m);

	/* the error answer whose message is msg (taken) */
	json_t *(*error_body)(json_t *msg);
	/* a streamed error event into ev; err holds the message */
	void (*error_event)(json_t *ev, json_t *err, const char *message);
	const char *error_event_name; /* its SSE event name, "" for none */

	/*
	 * lgrun's notes (steer.c): the object of the request that holds its
	 * conversation and its tools (root, or an envelope's), NULL when none
	 */
	json_t *(*holder)(json_t *root);
	/* the conversation's items in it (an array; a string made one), NULL */
	json_t *(*items)(json_t *holder);
	/* it continues a response stored upstream (previous_response_id) */
	bool (*stateful)(const json_t *root);
	/* notes p[0..k), all of one at, into the conversation; 0, -ENOMEM */
	int (*place)(json_t *items, const struct llm_note *p, size_t k);
};

#define LG_LLM_API(NAME, TABLE) extern const struct llm_api TABLE;
#include "apis.def"
#undef LG_LLM_API
/* The table of api; NULL for LG_LLM_UNKNOWN (and past LG_LLM_COUNT). */
const struct llm_api *llm_api(enum lg_llm_api api);

/* Shared by the APIs' files. */
/* request.c: just after the last message that made tool calls (0: none) */
size_t llm_after_calls(const struct llm_api *a, const json_t *msgs);
/* request.c: the body says "stream": true */
bool llm_streams_flag(const char *path, const char *body, size_t n);
/* close.c: one SSE event: "event: NAME\n" (NAME may be NULL), data, eol */
int llm_put_event(struct buf *b, const char *name, json_t *ev, const char *eol);
/* steer.c: the request itself holds its conversation and its tools */
json_t *llm_root(json_t *root);
/* steer.c: never stateful */
bool llm_stateless(const json_t *root);
/*
 * steer.c: the message notes at at join: the user message at at-1, else
 * the one at at when it carries tool results (nothing goes between a
 * turn's calls and their results); NULL when neither.
 */
json_t *llm_note_target(json_t *items, size_t at, bool (*user)(const json_t *m),
			bool (*results)(const json_t *m));
/* steer.c: at moved past the tool outputs that start there */
size_t llm_note_after(const json_t *items, size_t at,
		      bool (*output)(const json_t *m));
/* steer.c: each note's block(text) appended to blocks; 0, -ENOMEM */
int llm_note_blocks(json_t *blocks, const struct llm_note *p, size_t k,
		    json_t *(*block)(json_t *text));
/* steer.c: one message(blocks) holding the notes' blocks, inserted at at */
int llm_note_insert(json_t *items, size_t at, const struct llm_note *p,
		    size_t k, json_t *(*block)(json_t *text),
		    json_t *(*message)(json_t *blocks));

#endif
