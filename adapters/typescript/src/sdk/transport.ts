// The client side of an AHP transport: one message out, one message in.

/** One exchange: the response's bytes, or a transport failure (connection, timeout, status, exit). */
export type Exchange = { readonly body: Buffer } | { readonly error: string };

export interface ClientTransport {
  send(line: string): Promise<Exchange>;
  close(): Promise<void>;
}
