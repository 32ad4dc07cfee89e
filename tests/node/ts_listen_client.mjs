// The TypeScript SDK v2 client listening for changes (tests/test_live_peers.py).
// Usage: node ts_listen_client.mjs auto|pin|legacy URL
//        node ts_listen_client.mjs auto|pin|legacy COMMAND ARGS...   (a stdio server it spawns)
// Connects; on a 2026-07-28 connection opens `subscriptions/listen` ({resourcesListChanged}), on a
// 2025-11-25 one subscribes to skill://alpha/SKILL.md; then prints one JSON line per event:
// {"event":"ready",...} once, {"event":"list_changed"|"updated",...} per notification, and
// {"event":"closed","cause":...} when the listen stream ends. Exits when its stdin closes.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [mode, target, ...rest] = process.argv.slice(2);
const versionNegotiation =
    mode === 'pin' ? { mode: { pin: '2026-07-28' } } : { mode: mode === 'auto' ? 'auto' : 'legacy' };
const say = (record) => process.stdout.write(JSON.stringify(record) + '\n');
const client = new Client({ name: 'skills-core-tests', version: '0' }, { versionNegotiation });
const transport = target.startsWith('http')
    ? new StreamableHTTPClientTransport(new URL(target))
    : new StdioClientTransport({ command: target, args: rest, stderr: 'inherit' });
client.setNotificationHandler('notifications/resources/list_changed', (n) =>
    say({ event: 'list_changed', meta: n.params?._meta ?? null })
);
client.setNotificationHandler('notifications/resources/updated', (n) =>
    say({ event: 'updated', uri: n.params?.uri ?? null, meta: n.params?._meta ?? null })
);
try {
    await client.connect(transport);
    const negotiated = client.getNegotiatedProtocolVersion();
    let subscription = null;
    if (negotiated === '2026-07-28') {
        subscription = await client.listen({ resourcesListChanged: true, toolsListChanged: true });
        subscription.closed.then((cause) => say({ event: 'closed', cause }));
    } else {
        await client.subscribeResource({ uri: 'skill://alpha/SKILL.md' });
    }
    say({
        event: 'ready',
        negotiated,
        honored: subscription?.honoredFilter ?? null,
        capabilities: client.getServerCapabilities() ?? null,
        pid: transport.pid ?? null
    });
    process.stdin.on('end', async () => {
        await subscription?.close().catch(() => {});
        await client.close().catch(() => {});
        process.exit(0);
    });
    process.stdin.resume();
} catch (error) {
    process.stderr.write(`ts client failed: ${error?.stack ?? error}\n`);
    process.exit(1);
}
