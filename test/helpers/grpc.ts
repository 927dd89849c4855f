// A tiny gRPC client for tests: gRPC over HTTP/2 (node:http2) with just enough protobuf to
// speak to `opm serve`: the health check, ListPackages (a server stream), GetPackage and
// GetBundleForChannel. Field numbers follow operator-registry's api/registry.proto and
// grpc/health/v1/health.proto.
import { connect, type ClientHttp2Session } from 'node:http2';

/** One protobuf field value: varints as bigint, length-delimited as bytes. */
export type ProtoValue = bigint | Buffer;
export type ProtoMessage = Map<number, ProtoValue[]>;

function varint(value: number | bigint): Buffer {
  let v = BigInt(value);
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return Buffer.from(out);
}

/** Encode string fields (all the requests here need). */
export function encodeStrings(fields: Record<number, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [number, text] of Object.entries(fields)) {
    const bytes = Buffer.from(text, 'utf8');
    parts.push(varint((Number(number) << 3) | 2), varint(bytes.length), bytes);
  }
  return Buffer.concat(parts);
}

/** Decode any message into its fields (wire types 0, 1, 2 and 5). */
export function decode(data: Buffer): ProtoMessage {
  const out: ProtoMessage = new Map();
  let at = 0;
  const readVarint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (at >= data.length) throw new Error('truncated varint');
      const byte = data[at++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (at < data.length) {
    const key = readVarint();
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    let value: ProtoValue;
    if (wire === 0) value = readVarint();
    else if (wire === 2) {
      const length = Number(readVarint());
      value = data.subarray(at, at + length);
      at += length;
    } else if (wire === 1 || wire === 5) {
      const size = wire === 1 ? 8 : 4;
      value = data.subarray(at, at + size);
      at += size;
    } else throw new Error(`unsupported wire type ${wire}`);
    out.set(field, [...(out.get(field) ?? []), value]);
  }
  return out;
}

export const str = (m: ProtoMessage, field: number): string =>
  ((m.get(field)?.[0] as Buffer | undefined) ?? Buffer.alloc(0)).toString('utf8');
export const strs = (m: ProtoMessage, field: number): string[] =>
  (m.get(field) ?? []).map((v) => (v as Buffer).toString('utf8'));
export const num = (m: ProtoMessage, field: number): number => Number((m.get(field)?.[0] as bigint) ?? 0n);
export const messages = (m: ProtoMessage, field: number): ProtoMessage[] =>
  (m.get(field) ?? []).map((v) => decode(v as Buffer));

export class GrpcError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class GrpcClient {
  private readonly session: ClientHttp2Session;

  constructor(address: string) {
    this.session = connect(`http://${address}`);
    this.session.on('error', () => undefined); // surfaced per call
  }

  /** Call a method; every response message in order (one for unary, many for a stream). */
  call(path: string, request: Buffer, timeoutMs = 5000): Promise<Buffer[]> {
    return new Promise((resolve, reject) => {
      const stream = this.session.request({
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/grpc',
        te: 'trailers',
      });
      const timer = setTimeout(() => stream.close(), timeoutMs);
      const chunks: Buffer[] = [];
      let status: number | undefined;
      let message = '';
      const take = (headers: Record<string, unknown>): void => {
        if (headers['grpc-status'] !== undefined) {
          status = Number(headers['grpc-status']);
          message = decodeURIComponent(String(headers['grpc-message'] ?? ''));
        }
      };
      stream.on('response', take);
      stream.on('trailers', take);
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      stream.on('close', () => {
        clearTimeout(timer);
        if (status === undefined) return reject(new Error(`${path}: no grpc-status (closed or timed out)`));
        if (status !== 0) return reject(new GrpcError(status, `${path}: grpc-status ${status} ${message}`));
        const body = Buffer.concat(chunks);
        const out: Buffer[] = [];
        for (let at = 0; at + 5 <= body.length;) {
          if (body[at] !== 0) return reject(new Error(`${path}: compressed messages are not supported`));
          const length = body.readUInt32BE(at + 1);
          out.push(body.subarray(at + 5, at + 5 + length));
          at += 5 + length;
        }
        resolve(out);
      });
      const frame = Buffer.alloc(5);
      frame.writeUInt32BE(request.length, 1);
      stream.end(Buffer.concat([frame, request]));
    });
  }

  /** grpc.health.v1 Check: 1 is SERVING. */
  async health(): Promise<number> {
    const [answer] = await this.call('/grpc.health.v1.Health/Check', Buffer.alloc(0), 1000);
    return num(decode(answer ?? Buffer.alloc(0)), 1);
  }

  async listPackages(): Promise<string[]> {
    const answers = await this.call('/api.Registry/ListPackages', Buffer.alloc(0));
    return answers.map((a) => str(decode(a), 1));
  }

  /** Package: name 1, channels 2 (Channel: name 1, csvName 2), defaultChannelName 3. */
  async getPackage(name: string): Promise<ProtoMessage> {
    const [answer] = await this.call('/api.Registry/GetPackage', encodeStrings({ 1: name }));
    return decode(answer ?? Buffer.alloc(0));
  }

  /**
   * Bundle: csvName 1, packageName 2, channelName 3, csvJson 4, object 5, bundlePath 6,
   * providedApis 7, requiredApis 8, version 9, skipRange 10, dependencies 11,
   * properties 12, replaces 13, skips 14.
   */
  async getBundleForChannel(pkgName: string, channelName: string): Promise<ProtoMessage> {
    const [answer] = await this.call(
      '/api.Registry/GetBundleForChannel',
      encodeStrings({ 1: pkgName, 2: channelName }),
    );
    return decode(answer ?? Buffer.alloc(0));
  }

  close(): void {
    this.session.close();
  }
}

/** Poll the health check until it answers SERVING; resolves with the time it took. */
export async function waitServing(
  address: string,
  timeoutMs: number,
  exited?: () => string | undefined,
): Promise<number> {
  const started = performance.now();
  for (;;) {
    const why = exited?.();
    if (why) throw new Error(`the server ended before serving: ${why}`);
    const client = new GrpcClient(address);
    try {
      if ((await client.health()) === 1) return performance.now() - started;
    } catch {
      // not listening yet
    } finally {
      client.close();
    }
    if (performance.now() - started > timeoutMs)
      throw new Error(`${address} was not SERVING within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
