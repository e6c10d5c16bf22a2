// Package mcpserver is the StoreLink MCP server.
package mcpserver
