package main

import (
	"github.com/pcourt/pcourt/libs/auth"
)

// devMCPClientID is the MCP server's platform client id in the stack.
const devMCPClientID = "ocl_mcp"

// mcpClient is the MCP server's platform client in accounts
// (docs/accounts.md, "The MCP audience and token exchange"): the id, and a
// secret made at every start, as the stack's other credentials are (the
// stack keeps it nowhere but in the processes' environments). accounts
// gets both, with the MCP server's resource (config.mcpResourceURL); the
// mcp service, once the stack runs it, gets env as its own: stackServices
// puts it in the env map under "mcp".
type mcpClient struct {
	ID     string
	Secret string
}

// newMCPClient makes the client of this start.
func newMCPClient() mcpClient {
	return mcpClient{ID: devMCPClientID, Secret: auth.NewToken("pc_ocs_")}
}

// env is the client as accounts and the mcp service read it:
// MCP_CLIENT_ID and MCP_CLIENT_SECRET.
func (c mcpClient) env() []string {
	return []string{"MCP_CLIENT_ID=" + c.ID, "MCP_CLIENT_SECRET=" + c.Secret}
}

// mcpResourceURL is the MCP server's resource identifier (RFC 8707): the
// edge's URL and /mcp, where clients reach it, as the API's is the edge's
// URL.
func (c config) mcpResourceURL() string { return c.publicURL() + "/mcp" }
