package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Role says who wrote a Message.
type Role string

// The roles of a conversation, as every chat-completion API has them.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one turn of the conversation in a provider-neutral shape.
type Message struct {
	Role Role
	// Text is the message's text: prompt, request, assistant words or tool
	// result.
	Text string
	// ToolCalls are the tools an assistant message asks to run.
	ToolCalls []ToolCall
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string
	// IsError marks a tool result the server flagged as an error.
	IsError bool
	// Asks marks an assistant message that puts a question to the buyer
	// and waits for the reply (Agent.Replies) instead of ending the run.
	Asks bool
}

// ToolCall is one tool invocation requested by the model.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage
}

// Model decides the next assistant message. A message without tool calls
// ends the run; its text is the final answer ("" for none).
type Model interface {
	Next(ctx context.Context, conversation []Message, tools []*mcp.Tool) (Message, error)
}

// Step is one tool call of a run and what came back.
type Step struct {
	// Note is what the assistant said along with the call (its reasoning).
	Note string
	Call ToolCall
	// Result is the tool result's text, or the protocol error.
	Result json.RawMessage
	// Outcome is "ok", the envelope's error code, or ProtocolError.
	Outcome string
	IsError bool
}

// ProtocolError is the outcome of a call the MCP session refused or lost.
const ProtocolError = "PROTOCOL_ERROR"

// Run is the trace of one agent run.
type Run struct {
	Request string
	Steps   []Step
	// Answer is the final answer; Answered is false when there was none.
	Answer   string
	Answered bool
	// Conversation is every message of the run, system prompt first.
	Conversation []Message
	// Asked are the questions put to the buyer before the final answer,
	// with the buyer's replies.
	Asked []Exchange
}

// Exchange is a question the model put to the buyer and the reply.
type Exchange struct {
	// AfterStep is how many tool calls preceded the question.
	AfterStep int
	Question  string
	Reply     string
}

// Agent is the loop: model, tool calls, results, until the model answers.
type Agent struct {
	Session *mcp.ClientSession
	Model   Model
	// MaxTurns bounds the model's turns; 0 means 24.
	MaxTurns int
	// BeforeCall, when set, runs before the n-th tool call (0-based).
	BeforeCall func(ctx context.Context, n int, call ToolCall) error
	// CallTimeout bounds one tool call; 0 means 30 s.
	CallTimeout time.Duration
	// Replies are the buyer's answers, in order, to the model's questions
	// (Message.Asks); once they are used up, a question is the final
	// answer.
	Replies []string
}

// systemPrompt starts every run; the server's instructions follow it.
const systemPrompt = "You are a category buyer's assistant for Korral grocery stores. Use the StoreLink tools; answer the buyer in a few sentences and say what you did and did not do."

// Run sends the request to the model and loops until it answers.
func (a *Agent) Run(ctx context.Context, request string) (*Run, error) {
	tools, err := a.tools(ctx)
	if err != nil {
		return nil, err
	}
	system := systemPrompt
	if ir := a.Session.InitializeResult(); ir != nil && ir.Instructions != "" {
		system += "\n\nServer instructions:\n" + ir.Instructions
	}
	run := &Run{Request: request, Conversation: []Message{
		{Role: RoleSystem, Text: system},
		{Role: RoleUser, Text: request},
	}}
	maxTurns := a.MaxTurns
	if maxTurns == 0 {
		maxTurns = 24
	}
	for turn := 0; turn < maxTurns; turn++ {
		msg, err := a.Model.Next(ctx, run.Conversation, tools)
		if err != nil {
			return run, fmt.Errorf("model turn %d: %w", turn+1, err)
		}
		msg.Role = RoleAssistant
		run.Conversation = append(run.Conversation, msg)
		if len(msg.ToolCalls) == 0 {
			if msg.Asks && len(run.Asked) < len(a.Replies) {
				reply := a.Replies[len(run.Asked)]
				run.Asked = append(run.Asked, Exchange{AfterStep: len(run.Steps), Question: msg.Text, Reply: reply})
				run.Conversation = append(run.Conversation, Message{Role: RoleUser, Text: reply})
				continue
			}
			run.Answer, run.Answered = msg.Text, msg.Text != ""
			return run, nil
		}
		for i, call := range msg.ToolCalls {
			if a.BeforeCall != nil {
				if err := a.BeforeCall(ctx, len(run.Steps), call); err != nil {
					return run, fmt.Errorf("before call %d: %w", len(run.Steps)+1, err)
				}
			}
			step := a.call(ctx, call)
			if i == 0 {
				step.Note = msg.Text
			}
			run.Steps = append(run.Steps, step)
			run.Conversation = append(run.Conversation, Message{Role: RoleTool, ToolCallID: call.ID, Text: string(step.Result), IsError: step.IsError})
		}
	}
	return run, nil
}

func (a *Agent) tools(ctx context.Context) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range a.Session.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		out = append(out, t)
	}
	return out, nil
}

// call runs one tool call; a session failure becomes a result the model
// reads, not a loop error.
func (a *Agent) call(ctx context.Context, call ToolCall) Step {
	timeout := a.CallTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	step := Step{Call: call}
	var args any = json.RawMessage(call.Arguments)
	if len(call.Arguments) == 0 {
		args = map[string]any{}
	}
	res, err := a.Session.CallTool(cctx, &mcp.CallToolParams{Name: call.Name, Arguments: args})
	if err != nil {
		step.Outcome, step.IsError = ProtocolError, true
		step.Result, _ = json.Marshal(map[string]any{"protocol_error": err.Error()})
		return step
	}
	step.IsError = res.IsError
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	step.Result = json.RawMessage(text)
	step.Outcome = outcomeOf(step.Result)
	if !json.Valid(step.Result) {
		step.Result, _ = json.Marshal(map[string]any{"text": text})
		step.Outcome = ProtocolError
	}
	return step
}

// envelope is the server's answer shape, as far as outcomes need it.
type envelope struct {
	OK    bool `json:"ok"`
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
}

func outcomeOf(result json.RawMessage) string {
	var env envelope
	if err := json.Unmarshal(result, &env); err != nil {
		return ProtocolError
	}
	if env.OK {
		return "ok"
	}
	if env.Error != nil && env.Error.Code != "" {
		return env.Error.Code
	}
	return ProtocolError
}
