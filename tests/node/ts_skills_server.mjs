// A skills server built with the TypeScript SDK v2 (@modelcontextprotocol/server 2.4.0,
// ext/skills), serving the skill folders under ROOT: over stdio, or over Streamable HTTP with
// @modelcontextprotocol/node 2.1.2 on 127.0.0.1:PORT/mcp (both eras: modern per request, legacy
// stateless). A test peer of `skills-core check --server`.
//
//   node ts_skills_server.mjs ROOT stdio
//   node ts_skills_server.mjs ROOT http PORT
import { createServer } from 'node:http';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { loadSkills } from '@modelcontextprotocol/server/ext/skills/node';
import { localhostHostValidation, toNodeHandler } from '@modelcontextprotocol/node';

const [root, mode = 'stdio', port = '0'] = process.argv.slice(2);
if (!root) {
  process.stderr.write('usage: ts_skills_server.mjs ROOT [stdio|http PORT]\n');
  process.exit(2);
}
const skills = await loadSkills(root, {
  cacheHint: { ttlMs: 60000, cacheScope: 'public' },
  onWarning: (w) => process.stderr.write(`warning: ${w.path}: ${w.message}\n`),
});

function factory() {
  const server = new McpServer({ name: 'ts-skills-peer', version: '1.0.0' });
  skills.attach(server);
  return server;
}

if (mode === 'stdio') {
  serveStdio(factory);
} else {
  const handler = toNodeHandler(createMcpHandler(factory));
  const validateHost = localhostHostValidation();
  const server = createServer(async (req, res) => {
    if (!validateHost(req, res)) return;
    if (!req.url || !req.url.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    await handler(req, res);
  });
  server.listen(Number(port), '127.0.0.1', () => {
    process.stdout.write(`listening ${server.address().port}\n`);
  });
}
