/**
 * A TCP relay between the browser and JupyterLab, to cut the network for real in the
 * middle of a turn: `cut()` closes every open connection (the page's streams drop as on
 * a lost network) and refuses new ones until `restore()`.
 */
import * as net from 'net';

export interface ITcpProxy {
  port: number;
  /** Drop every connection and refuse new ones. */
  cut(): void;
  /** Accept connections again. */
  restore(): void;
  close(): Promise<void>;
}

export async function startProxy(port: number, target: number): Promise<ITcpProxy> {
  const sockets = new Set<net.Socket>();
  let refusing = false;
  const server = net.createServer(client => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = net.connect(target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>(resolve => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    cut() {
      refusing = true;
      for (const socket of sockets) {
        socket.destroy();
      }
    },
    restore() {
      refusing = false;
    },
    close: () =>
      new Promise<void>(resolve => {
        for (const socket of sockets) {
          socket.destroy();
        }
        server.close(() => resolve());
      })
  };
}
