"""`memapp mcp`: the memory as a Model Context Protocol server (stdio), for Claude Desktop, Claude Code and
other MCP clients.

app.mcp.server builds the server from the one table of tools in app.mcp.table; the tools themselves are
plain functions over a Store (app.mcp.memory_tools, app.mcp.thread_tools) returning the result models of
app.mcp.results, whose parameters are typed in app.mcp.args. Nothing is imported here: the SDK is loaded
only by `memapp mcp`.
"""
