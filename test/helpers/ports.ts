import net from 'node:net';

/**
 * A loopback port nothing listens on: one the system just gave a server, closed again. A fixed port number in the
 * ephemeral range could be any parallel test's server at that moment (a sync test met another suite's store on one).
 */
export async function closedPort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}
