// Package modelfake is a scripted model endpoint for tests: an in-process
// HTTP server on 127.0.0.1 that speaks enough of the OpenAI Responses API
// (POST /v1/responses, streamed as codex reads it) and of the Anthropic
// Messages API (POST /v1/messages, streamed as Claude Code reads it) to play
// a script against a real agent CLI: receive the prompt, ask the CLI to run a
// shell command, receive the command's output, answer with a final message
// or a structured result. Every request is recorded so a test can assert
// that the skill text and the params reached the model and that the tool
// output came back.
//
// The script is played per conversation and needs no server-side state: the
// number of shell calls already in a request's history is the index of the
// turn to play, so retries and concurrent conversations are safe. Requests
// without the shell tool (title generation, quota probes), token counts,
// model listings and connectivity probes are answered generically and do not
// consume the script.
package modelfake
