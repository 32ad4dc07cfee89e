// A skills server built with the TypeScript SDK v2 (@modelcontextprotocol/server 2.4.0, ext/skills)
// whose catalog reloads on SIGUSR2 (`catalog.reload()`), sending the change to its clients: over
// stdio through the attached servers, over Streamable HTTP (@modelcontextprotocol/node 2.1.2)
// through `handler.notify.resourcesChanged()`. A test peer of `skills-core host ... watch`
// (tests/test_live_peers.py). Writes its pid to PIDFILE; over HTTP, prints `listening PORT`.
//
//   node ts_live_skills_server.mjs ROOT PIDFILE stdio
//   node ts_live_skills_server.mjs ROOT PIDFILE http PORT
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { loadSkills } from '@modelcontextprotocol/server/ext/skills/node';
import { localhostHostValidation, toNodeHandler } from '@modelcontextprotocol/node';

const [root, pidfile, mode = 'stdio', port = '0'] = process.argv.slice(2);
const skills = await loadSkills(root, { cacheHint: { ttlMs: 1000, cacheScope: 'public' } });

function factory() {
  const server = new McpServer({ name: 'ts-live-skills-peer', version: '1.0.0' });
  skills.attach(server);
  return server;
}

let handler = null;
process.on('SIGUSR2', async () => {
  const changes = await skills.reload();
  process.stderr.write(`reloaded ${JSON.stringify(changes)}\n`);
  if (handler !== null && changes.listChanged) handler.notify.resourcesChanged();
});
writeFileSync(pidfile, String(process.pid));

if (mode === 'stdio') {
  serveStdio(factory);
} else {
  handler = createMcpHandler(factory);
  const nodeHandler = toNodeHandler(handler);
  const validateHost = localhostHostValidation();
  const server = createServer(async (req, res) => {
    if (!validateHost(req, res)) return;
    if (!req.url || !req.url.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    await nodeHandler(req, res);
  });
  server.listen(Number(port), '127.0.0.1', () => {
    process.stdout.write(`listening ${server.address().port}\n`);
  });
}
