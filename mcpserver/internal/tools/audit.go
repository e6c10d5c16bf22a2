package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/audit"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/textsafe"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// promptTool is how the audit trail names a prompt: "prompt." and its name.
const promptTool = "prompt."

// promptArgs are the arguments each prompt declares, the only ones whose
// values the trail keeps (TestPromptArgsAreTheDeclaredOnes); others are
// only counted.
var promptArgs = map[string][]string{
	promptRestockGaps: {"sku", "min_gap_units", "store_ids"},
	promptOrdersSince: {"sku", "store_id", "since"},
}

// Bounds, in runes, of what the trail keeps of a prompt request.
const (
	maxPromptArg    = 64
	maxPromptStores = 160
)

// auditPrompts writes one audit record for every prompts/get, as for a
// tool call: call id, caller, prompt, argument summary and outcome, also
// when the SDK or the prompt refuses the request.
func (s *server) auditPrompts(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		gpr, ok := req.(*mcp.GetPromptRequest)
		if !ok || gpr.Params == nil {
			return next(ctx, method, req)
		}
		start := time.Now()
		name := audit.ClientName(gpr.Params.Name)
		// newCall reads only the session and the caller's token.
		c := s.newCall(&mcp.CallToolRequest{Session: gpr.Session, Extra: gpr.Extra}, promptTool+name)
		args, declared := gpr.Params.Arguments, promptArgs[gpr.Params.Name]
		if sku := strings.TrimSpace(args["sku"]); declared != nil && skuRE.MatchString(sku) {
			c.sku = sku
		}
		store := strings.TrimSpace(args["store_id"])
		if gpr.Params.Name == promptRestockGaps {
			store = strings.TrimSpace(args["store_ids"])
		}
		if declared != nil && storeIDRE.MatchString(store) {
			c.storeID = store
		}
		ctx = callid.With(ctx, c.id)
		res, err := next(ctx, method, req)
		elapsed := time.Since(start)
		summary := fmt.Sprintf("Prompt %s%s.", name, promptArgsSummary(args, declared))
		if err != nil {
			code, why := promptFailure(err)
			s.log.WarnContext(ctx, "prompt.err", "call_id", c.id, "prompt", name, "client", c.client, "error_code", code, "error_message", why, "cause", textsafe.Bound(err.Error(), audit.MaxReason))
			s.audit(ctx, c, "error", code, fmt.Sprintf("%s; refused: %s.", strings.TrimSuffix(summary, "."), strings.TrimSuffix(why, ".")), elapsed)
			return res, err
		}
		s.audit(ctx, c, state.OutcomeOK, "", summary, elapsed)
		return res, err
	}
}

// promptArgsSummary is " with name=value, ..." for the declared arguments
// given (escaped, bounded, in declaration order), and a count of others.
func promptArgsSummary(args map[string]string, declared []string) string {
	var parts []string
	for _, a := range declared {
		if v, ok := args[a]; ok {
			limit := maxPromptArg
			if a == "store_ids" {
				limit = maxPromptStores
			}
			parts = append(parts, a+"="+textsafe.Bound(v, limit))
		}
	}
	if other := len(args) - len(parts); other > 0 {
		parts = append(parts, fmt.Sprintf("%d undeclared argument(s), values not kept", other))
	}
	if len(parts) == 0 {
		return " without arguments"
	}
	return " with " + strings.Join(parts, ", ")
}

// promptFailure is the code and message of a refused prompts/get; an SDK
// refusal (unknown prompt) is an invalid argument.
func promptFailure(err error) (code, message string) {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		return string(apperr.InternalError), "the prompt failed"
	}
	var body struct{ Code, Message string }
	if json.Unmarshal(rpcErr.Data, &body) == nil && body.Code != "" {
		return body.Code, textsafe.Bound(body.Message, audit.MaxReason)
	}
	if rpcErr.Code == jsonrpc.CodeInvalidParams {
		return string(apperr.InvalidArgument), textsafe.Bound(rpcErr.Message, audit.MaxReason)
	}
	return string(apperr.InternalError), "the prompt failed"
}
