# mcp-gateway: the template the public client's Sandbox.create({ mcp }) asks for. The client
# runs `mcp-gateway --config '<json>'` in it as root; the gateway serves the configured MCP
# servers on port 50005 at /mcp. The gateway and its servers come from the repository's
# packages/mcp-gateway (bundled from the npm registry at `pnpm install`), so neither the build
# nor a sandbox downloads anything. Install it with `x template install mcp-gateway`; add your
# own servers with a Dockerfile starting `FROM mcp-gateway`, or E2B's Template.addMcpServer.
FROM base

COPY mcp-gateway /usr/local/lib/mcp-gateway
# every server it ships is checked here: it starts and answers MCP in this image
RUN install -m 0755 /usr/local/lib/mcp-gateway/mcp-gateway /usr/local/bin/mcp-gateway && \
    install -d -m 0700 /etc/mcp-gateway /var/lib/mcp-gateway && \
    mcp-gateway pull filesystem memory sequentialthinking everything github slack googleMaps brave notion

USER user
WORKDIR /home/user
