package cli

import "github.com/korral/storelink/mcpserver/internal/config"

const usage = `storelink-mcp: the Korral StoreLink MCP server.

Usage:
  storelink-mcp [stdio] [settings]    serve MCP over stdin/stdout (default)
  storelink-mcp serve --http ADDR [--stateless] [--console ADDR2] [settings]
                                      serve MCP over Streamable HTTP at /mcp, and the
                                      approvals console on a listener of its own
  storelink-mcp console --listen ADDR [--tls-cert F --tls-key F|--behind-tls-proxy]
                                      serve the approvals console alone (stdio deployments)
  storelink-mcp doctor [settings]     check the configuration, StoreLink, every key,
                                      the state database and the clock; exit 0 when all pass
  storelink-mcp audit [flags]         print the audit trail (--day, --store, --call, --tool)
  storelink-mcp audit report [flags]  calls, outcomes, error rate and latency per tool,
                                      and the pilot questions
  storelink-mcp approvals list [--all]|show ID|approve ID|reject ID --approver NAME
                                      release or refuse staged orders (a person's job)
  storelink-mcp approvals resolve KEY --raised ORDER_ID|--not-raised --approver NAME
                                      record what StoreLink holds for an unknown outcome
  storelink-mcp approvers add NAME [--stores IDS] [--secret-stdin]|list|revoke NAME
                                      the people who may approve, each with a secret of
                                      their own; only a verifier of it is stored
  storelink-mcp migrate               bring the state database's schema up to date
  storelink-mcp version               print the version (also --version)
  storelink-mcp help                  print this help (also -h, --help)

Settings (each overrides its environment variable):
` + config.SettingsHelp + `
"storelink-mcp COMMAND --help" shows a command's flags. Secrets have no flag: they
come from the environment only; see the README's configuration table.
With UPSTREAM_BASE_URL unset, an embedded demo StoreLink with made-up data is
started, and every answer says so.
`
