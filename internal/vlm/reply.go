package vlm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxAnswer is the largest response body, and so the longest answer, the client reads. A
// chat completion is a few KB, and the simulator sends every answer back with each later
// turn, so a 15 MB answer kept whole would grow every request of its episode. A larger body fails the turn (not retried: the
// server would send it again), for simulate and judge alike.
const MaxAnswer = 16 << 20

// The wire shapes of a chat completion answer that servers differ in: message.content as a
// string or as an array of parts, the answer streamed as server-sent events (choices[].delta)
// although "stream": false was sent, and an error object in a 200 body.
type (
	wireResponse struct {
		Choices *[]wireChoice   `json:"choices"`
		Usage   *wireUsage      `json:"usage"`
		Error   json.RawMessage `json:"error"`
		// Object "error": vLLM's and SGLang's error response, whose message, type and code
		// are at the top level rather than under "error".
		Object string `json:"object"`
	}
	wireChoice struct {
		Message      *wireContent `json:"message"`
		Delta        *wireContent `json:"delta"`
		FinishReason *string      `json:"finish_reason"`
	}
	wireContent struct {
		Content json.RawMessage `json:"content"`
		// ToolCalls and the reasoning fields are read only to say why a message has no
		// text: a tool call in place of an answer, or only the model's thinking (vLLM and
		// SGLang reasoning parsers write reasoning_content; Ollama and OpenRouter reasoning).
		ToolCalls        json.RawMessage `json:"tool_calls"`
		ReasoningContent *string         `json:"reasoning_content"`
		Reasoning        *string         `json:"reasoning"`
		// Refusal is OpenAI's refusal under structured outputs: content null and the
		// model's words here. They are its answer, taken as the text.
		Refusal *string `json:"refusal"`
	}
	wireUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	}
)

// answer is a response body read into one answer.
type answer struct {
	text                           string
	finish                         string // the first choice's finish_reason ("" when none)
	promptTokens, completionTokens int
	usage                          bool
}

// readAnswer reads a 200 response body: a chat completion, or an event stream of chunks
// (the server streamed although asked not to). A body that is not one is an *Error; one
// whose message has no text (KindNoText) comes with its token counts.
func readAnswer(body []byte, contentType string) (answer, *Error) {
	if isEventStream(body, contentType) {
		return readStream(body)
	}
	var wr wireResponse
	if err := json.Unmarshal(body, &wr); err != nil {
		return answer{}, &Error{Kind: KindMalformed, Err: err, Body: snippet(body), notJSON: !json.Valid(body)}
	}
	if e := apiError(wr.Error); e != nil {
		return answer{}, e
	}
	if wr.Object == "error" && wr.Choices == nil {
		return answer{}, apiError(body)
	}
	if wr.Choices == nil {
		return answer{}, &Error{Kind: KindMalformed, Err: errors.New(`no "choices" list`), Body: snippet(body)}
	}
	if len(*wr.Choices) == 0 {
		return answer{}, &Error{Kind: KindEmpty}
	}
	ch := (*wr.Choices)[0]
	if ch.Message == nil {
		return answer{}, &Error{Kind: KindMalformed, Err: errors.New(`choices[0] has no message.content`), Body: snippet(body)}
	}
	a := answer{}
	if ch.FinishReason != nil {
		a.finish = *ch.FinishReason
	}
	if wr.Usage != nil {
		a.usage, a.promptTokens, a.completionTokens = true, wr.Usage.PromptTokens, wr.Usage.CompletionTokens
	}
	text, ok := contentText(ch.Message.Content)
	null := !ok && isNull(ch.Message.Content)
	if !ok && !null {
		return answer{}, &Error{Kind: KindMalformed, Err: errors.New(`choices[0].message.content is neither text nor a list of text parts`), Body: snippet(body)}
	}
	a.text = text
	var n noText
	n.see(ch.Message)
	if e := n.check(&a); e != nil {
		e.Body = snippet(body)
		return answer{usage: a.usage, promptTokens: a.promptTokens, completionTokens: a.completionTokens}, e
	}
	if null && a.text == "" && a.finish != "length" && a.finish != "content_filter" {
		// content null with nothing in its place: not an answer, and not an empty one.
		return answer{}, &Error{Kind: KindMalformed, Err: errors.New(`choices[0].message.content is neither text nor a list of text parts`), Body: snippet(body)}
	}
	return a, nil
}

// isNull: a JSON null, or nothing at all (a message without "content").
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// noText gathers what a message that carries no text has instead: tool calls, only the
// model's thinking, or a refusal. Servers send content null (or "") with each; the first two
// are no answer, and an empty string stored as one would read as a model that said
// nothing; a refusal is the model's answer.
type noText struct {
	toolCalls, reasoning bool
	refusal              strings.Builder
}

func (n *noText) see(c *wireContent) {
	if c == nil {
		return
	}
	if t := bytes.TrimSpace(c.ToolCalls); len(t) > 0 && string(t) != "null" && string(t) != "[]" {
		n.toolCalls = true
	}
	for _, r := range []*string{c.ReasoningContent, c.Reasoning} {
		if r != nil && strings.TrimSpace(*r) != "" {
			n.reasoning = true
		}
	}
	if c.Refusal != nil {
		n.refusal.WriteString(*c.Refusal) // streamed in pieces, like content
	}
}

// check completes an answer without text: a refusal becomes its text; else a KindNoText
// when the message had tool calls or only reasoning instead, and nil otherwise. An answer cut
// at the token limit is the caller's KindTruncated, and one the content filter stopped its
// KindFiltered, whatever they hold. An empty string with nothing beside it is the model's own
// empty answer.
func (n *noText) check(a *answer) *Error {
	if a.text == "" && n.refusal.Len() > 0 {
		a.text = n.refusal.String()
	}
	if a.text != "" || a.finish == "length" || a.finish == "content_filter" {
		return nil
	}
	switch {
	case n.toolCalls:
		return &Error{Kind: KindNoText, Err: errors.New("only tool_calls: the model called a tool instead of answering (m3eval offers it none)")}
	case n.reasoning:
		return &Error{Kind: KindNoText, Err: errors.New("only reasoning_content, the model's thinking, and no answer after it (a server's reasoning parser may have taken the whole answer)")}
	}
	return nil
}

// contentText reads message.content: a string, or an array of parts whose text parts are
// joined in order (other parts, such as images, are left out). null and anything else: !ok.
func contentText(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == 'n' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Text != nil && (p.Type == "text" || p.Type == "output_text" || p.Type == "") {
			b.WriteString(*p.Text)
		}
	}
	return b.String(), true
}

// isEventStream tells a server-sent event stream: by its media type, or by a body that
// starts with a "data:" field (servers that stream under application/json).
func isEventStream(body []byte, contentType string) bool {
	if strings.HasPrefix(strings.TrimSpace(strings.ToLower(contentType)), "text/event-stream") {
		return true
	}
	b := bytes.TrimLeft(body, " \t\r\n")
	return bytes.HasPrefix(b, []byte("data:")) || bytes.HasPrefix(b, []byte(":")) || bytes.HasPrefix(b, []byte("event:"))
}

// readStream reads an event stream of chat completion chunks into one answer: the first
// choice's delta contents joined, its last finish_reason, the usage of the chunk that has
// one. Written by hand: the stream is already read whole (bounded by MaxAnswer), and the
// format's only part we need is its data lines (the SSE libraries for Go are clients that
// own the connection).
func readStream(body []byte) (answer, *Error) {
	var a answer
	var text strings.Builder
	var nt noText
	chunks, done := 0, false
	var data []string
	flush := func() *Error {
		if len(data) == 0 {
			return nil
		}
		payload := strings.Join(data, "\n")
		data = data[:0]
		if strings.TrimSpace(payload) == "[DONE]" {
			done = true
			return nil
		}
		var wr wireResponse
		if err := json.Unmarshal([]byte(payload), &wr); err != nil {
			return &Error{Kind: KindMalformed, Err: fmt.Errorf("event stream: a data line is not JSON: %v", err), Body: snippet([]byte(payload)), notJSON: true}
		}
		if e := apiError(wr.Error); e != nil {
			return e
		}
		if wr.Object == "error" && wr.Choices == nil {
			return apiError([]byte(payload))
		}
		chunks++
		if wr.Usage != nil {
			a.usage, a.promptTokens, a.completionTokens = true, wr.Usage.PromptTokens, wr.Usage.CompletionTokens
		}
		if wr.Choices == nil || len(*wr.Choices) == 0 {
			return nil
		}
		ch := (*wr.Choices)[0]
		for _, c := range []*wireContent{ch.Delta, ch.Message} {
			if c != nil {
				if s, ok := contentText(c.Content); ok {
					text.WriteString(s)
				}
				nt.see(c)
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finish = *ch.FinishReason
		}
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), MaxAnswer+1)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" { // an event ends
			if e := flush(); e != nil {
				return answer{}, e
			}
			continue
		}
		if v, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimPrefix(v, " "))
		}
	}
	if e := flush(); e != nil {
		return answer{}, e
	}
	if chunks == 0 {
		return answer{}, &Error{Kind: KindMalformed, Err: errors.New("event stream without a chat completion chunk"), Body: snippet(body), notJSON: !done}
	}
	if a.finish == "" && !done {
		// The stream was cut before its end: what came is not the whole answer.
		return answer{}, &Error{Kind: KindMalformed, Err: errors.New("event stream cut before its end (no finish_reason, no [DONE])"), Body: snippet(body), notJSON: true}
	}
	a.text = text.String()
	if e := nt.check(&a); e != nil {
		e.Body = snippet(body)
		return answer{usage: a.usage, promptTokens: a.promptTokens, completionTokens: a.completionTokens}, e
	}
	return a, nil
}

// apiError reads the "error" member of a 200 body: nil when there is none. Its code, type
// and message say whether another attempt may succeed (see transientAPIError).
func apiError(raw json.RawMessage) *Error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var obj struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	e := &Error{Kind: KindAPI}
	if json.Unmarshal(raw, &obj) == nil {
		e.APIMessage, e.APIType = obj.Message, obj.Type
		var code string
		if json.Unmarshal(obj.Code, &code) != nil {
			code = strings.TrimSpace(string(obj.Code))
		}
		if code != "null" {
			e.APICode = code
		}
	} else {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			e.APIMessage = s
		} else {
			e.APIMessage = string(raw)
		}
	}
	e.APIMessage = snippet([]byte(e.APIMessage))
	e.transient = transientAPIError(e.APICode, e.APIType, e.APIMessage)
	return e
}

// transientAPIError says whether an error a server sent in a 200 body is worth another
// attempt: its code is an HTTP status that is (429, 5xx), or its code, type or message names
// a rate limit, an overload, a timeout or a server that is briefly unavailable. Anything
// else (a bad request, an unknown model, a context too long) fails at once with the message.
func transientAPIError(code, typ, msg string) bool {
	if n, err := strconv.Atoi(code); err == nil {
		return n == 429 || (n >= 500 && n <= 599)
	}
	s := strings.ToLower(code + " " + typ + " " + msg)
	for _, w := range []string{"rate limit", "rate_limit", "ratelimit", "too many requests", "overload", "server_error",
		"server error", "internal error", "timeout", "timed out", "temporarily", "unavailable", "try again", "busy", "capacity"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
