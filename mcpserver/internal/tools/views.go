package tools

import (
	"context"
	"maps"

	"github.com/korral/storelink/mcpserver/internal/views"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addViews serves the MCP Apps views as resources to every client: they
// cost no model context, and only a host declaring the extension sees tools
// name them (ADR 0020).
func addViews(ms *mcp.Server) {
	for _, v := range views.All() {
		html := v.HTML
		ms.AddResource(&mcp.Resource{
			URI: v.URI, Name: v.Name, Title: v.Title, Description: v.Description,
			MIMEType: views.MIMEType, Size: int64(len(html)), Meta: views.ResourceMeta(),
		}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
				URI: req.Params.URI, MIMEType: views.MIMEType, Text: html, Meta: views.ResourceMeta(),
			}}}, nil
		})
	}
}

// viewsForExtension is the receiving middleware that names each tool's
// view in _meta.ui of tools/list for a client declaring MCP Apps; others
// get the SDK's list. The list is copied, not changed.
func viewsForExtension(next mcp.MethodHandler) mcp.MethodHandler {
	byTool := map[string]string{}
	for _, v := range views.All() {
		byTool[v.Tool] = v.URI
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/list" {
			return res, err
		}
		lr, ok := req.(*mcp.ListToolsRequest)
		list, ok2 := res.(*mcp.ListToolsResult)
		if !ok || !ok2 {
			return res, err
		}
		caps := lr.ClientCapabilities()
		if caps == nil || !views.Declared(caps.Extensions) {
			return res, err
		}
		out := *list
		out.Tools = make([]*mcp.Tool, len(list.Tools))
		for i, t := range list.Tools {
			out.Tools[i] = t
			if uri, ok := byTool[t.Name]; ok {
				c := *t
				c.Meta = maps.Clone(t.Meta)
				if c.Meta == nil {
					c.Meta = mcp.Meta{}
				}
				maps.Copy(c.Meta, views.ToolMeta(uri))
				out.Tools[i] = &c
			}
		}
		return &out, nil
	}
}
