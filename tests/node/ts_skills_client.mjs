// The TypeScript SDK v2 as a real HTTP client of `skills-core serve --http` (tests/test_http_clients.py).
// Usage: node ts_skills_client.mjs URL auto|pin|legacy
// Connects with the SDK's Streamable HTTP transport and the chosen version negotiation, then walks
// the whole listing with SkillsClient, gets every skill, reads and verifies every file of every
// skill (size, digest, and SKILL.md's frontmatter against the entry), lists every skill's root
// directory, and prints one JSON line with what it saw. Any failure exits 1 with the error.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';

const [url, mode] = process.argv.slice(2);
const versionNegotiation =
    mode === 'pin' ? { mode: { pin: '2026-07-28' } } : { mode: mode === 'auto' ? 'auto' : 'legacy' };
const client = new Client({ name: 'skills-core-tests', version: '0' }, { versionNegotiation });
const transport = new StreamableHTTPClientTransport(new URL(url));
try {
    await client.connect(transport);
    const skills = new SkillsClient(client);
    const listing = await skills.list();
    const out = {
        negotiated: client.getNegotiatedProtocolVersion(),
        sessionId: transport.sessionId ?? null,
        supported: skills.supported,
        directoryRead: skills.directoryRead,
        skills: [],
        ttlMs: listing.ttlMs ?? null
    };
    for (const entry of listing.skills) {
        const { skill } = await skills.get(entry.uri);
        const files = [];
        for (const resource of skill.resources) {
            const file = await skills.read(skill, resource.uri);
            files.push({ uri: file.uri, bytes: file.bytes.length, verified: file.verified });
        }
        const root = entry.uri.slice(0, -'/SKILL.md'.length);
        const directory = skills.directoryRead ? (await skills.readDirectory(root)).resources.map((r) => r.uri) : [];
        out.skills.push({ uri: entry.uri, name: skill.frontmatter.name, files, directory });
    }
    if (transport.sessionId) {
        await transport.terminateSession(); // DELETE: our server answers 405, which the SDK tolerates
    }
    await client.close();
    process.stdout.write(JSON.stringify(out) + '\n');
} catch (error) {
    process.stderr.write(`ts client failed: ${error?.stack ?? error}\n`);
    process.exit(1);
}
