// Throwaway trust material for the tests, made with node:crypto and a minimal
// DER writer: an ECDSA P-256 CA, a server certificate (SANs IP 127.0.0.1 and
// DNS localhost, serverAuth EKU, SKI/AKI), a client certificate (clientAuth
// EKU) and an ES256 token key pair. Written to a temporary directory only.

import {
  createHash,
  generateKeyPairSync,
  sign,
  type KeyObject,
} from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

function length(size: number): Buffer {
  if (size < 0x80) return Buffer.from([size]);
  const bytes: number[] = [];
  for (let rest = size; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

const sequence = (...items: Buffer[]) => tlv(0x30, ...items);
const set = (...items: Buffer[]) => tlv(0x31, ...items);
const octets = (data: Buffer) => tlv(0x04, data);
const bits = (data: Buffer) => tlv(0x03, Buffer.from([0]), data);
const utf8 = (text: string) => tlv(0x0c, Buffer.from(text, "utf8"));
const bool = (value: boolean) => tlv(0x01, Buffer.from([value ? 0xff : 0]));
const explicit = (tagNumber: number, item: Buffer) =>
  tlv(0xa0 | tagNumber, item);

/**
 * A DER INTEGER of the unsigned big-endian `value`: minimal, as DER requires
 * (a random serial starting with a zero byte made OpenSSL refuse about one
 * certificate in 512), and with a zero byte first when the high bit is set.
 */
function integer(value: Buffer): Buffer {
  let start = 0;
  while (start < value.length - 1 && value[start] === 0) start += 1;
  const minimal = value.subarray(start);
  const trimmed =
    minimal[0] !== undefined && minimal[0] & 0x80
      ? Buffer.concat([Buffer.from([0]), minimal])
      : minimal;
  return tlv(0x02, trimmed);
}

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split(".").map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7)
      chunk.unshift((value & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function utcTime(date: Date): Buffer {
  const pad = (value: number) => String(value).padStart(2, "0");
  const text =
    pad(date.getUTCFullYear() % 100) +
    pad(date.getUTCMonth() + 1) +
    pad(date.getUTCDate()) +
    pad(date.getUTCHours()) +
    pad(date.getUTCMinutes()) +
    pad(date.getUTCSeconds()) +
    "Z";
  return tlv(0x17, Buffer.from(text, "ascii"));
}

const ECDSA_SHA256 = sequence(oid("1.2.840.10045.4.3.2"));

function name(commonName: string): Buffer {
  return sequence(set(sequence(oid("2.5.4.3"), utf8(commonName))));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical
    ? sequence(oid(id), bool(true), octets(value))
    : sequence(oid(id), octets(value));
}

function keyIdentifier(key: KeyObject): Buffer {
  const spki = key.export({ type: "spki", format: "der" });
  // The subjectPublicKey BIT STRING of a P-256 SPKI is its last 65 bytes.
  return createHash("sha1")
    .update(spki.subarray(spki.length - 65))
    .digest();
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

interface Issued {
  readonly certificate: string;
  readonly key: string;
}

interface KeyPair {
  readonly publicKey: KeyObject;
  readonly privateKey: KeyObject;
}

interface CertificateRequest {
  readonly commonName: string;
  readonly subjectKey: KeyPair;
  readonly issuerName: string;
  readonly issuerKey: KeyPair;
  readonly ca: boolean;
  readonly usage: "serverAuth" | "clientAuth" | null;
}

function certificate(request: CertificateRequest): Issued {
  const now = Date.now();
  const extensions = [
    extension(
      "2.5.29.19",
      true,
      request.ca ? sequence(bool(true)) : sequence(),
    ),
    // keyUsage: keyCertSign + cRLSign for the CA, digitalSignature for leaves.
    extension(
      "2.5.29.15",
      true,
      request.ca
        ? tlv(0x03, Buffer.from([1, 0x06]))
        : tlv(0x03, Buffer.from([7, 0x80])),
    ),
    extension(
      "2.5.29.14",
      false,
      octets(keyIdentifier(request.subjectKey.publicKey)),
    ),
    extension(
      "2.5.29.35",
      false,
      sequence(tlv(0x80, keyIdentifier(request.issuerKey.publicKey))),
    ),
  ];
  if (request.usage === "serverAuth") {
    extensions.push(
      extension("2.5.29.37", false, sequence(oid("1.3.6.1.5.5.7.3.1"))),
    );
    const ip = tlv(0x87, Buffer.from([127, 0, 0, 1]));
    const dns = tlv(0x82, Buffer.from("localhost", "ascii"));
    extensions.push(extension("2.5.29.17", false, sequence(ip, dns)));
  } else if (request.usage === "clientAuth") {
    extensions.push(
      extension("2.5.29.37", false, sequence(oid("1.3.6.1.5.5.7.3.2"))),
    );
  }
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))),
    integer(
      createHash("sha256")
        .update(`${request.commonName}${now}${Math.random()}`)
        .digest()
        .subarray(0, 16),
    ),
    ECDSA_SHA256,
    name(request.issuerName),
    sequence(
      utcTime(new Date(now - 3600_000)),
      utcTime(new Date(now + 86_400_000)),
    ),
    name(request.commonName),
    request.subjectKey.publicKey.export({ type: "spki", format: "der" }),
    explicit(3, sequence(...extensions)),
  );
  const signature = sign("sha256", tbs, request.issuerKey.privateKey);
  return {
    certificate: pem(
      "CERTIFICATE",
      sequence(tbs, ECDSA_SHA256, bits(signature)),
    ),
    key: request.subjectKey.privateKey
      .export({ type: "pkcs8", format: "pem" })
      .toString(),
  };
}

const p256 = () => generateKeyPairSync("ec", { namedCurve: "P-256" });

interface Authority extends Issued {
  readonly name: string;
  readonly keys: KeyPair;
}

/** A self-signed CA certificate with a fresh key. */
function authority(commonName: string): Authority {
  const keys = p256();
  const issued = certificate({
    commonName,
    subjectKey: keys,
    issuerName: commonName,
    issuerKey: keys,
    ca: true,
    usage: null,
  });
  return { ...issued, name: commonName, keys };
}

/** A leaf certificate with a fresh key, issued by `issuer`. */
function leaf(
  commonName: string,
  issuer: Authority,
  usage: "serverAuth" | "clientAuth",
): Issued {
  return certificate({
    commonName,
    subjectKey: p256(),
    issuerName: issuer.name,
    issuerKey: issuer.keys,
    ca: false,
    usage,
  });
}

export interface TrustFiles {
  readonly directory: string;
  readonly caFile: string;
  readonly serverCertFile: string;
  readonly serverKeyFile: string;
  readonly clientCertFile: string;
  readonly clientKeyFile: string;
  readonly otherCaFile: string;
  readonly otherClientCertFile: string;
  readonly otherClientKeyFile: string;
  readonly tokenPublicKeyFile: string;
  readonly tokenPrivateKey: KeyObject;
}

/** Fresh trust material in a new temporary directory (the caller removes it). */
export function makeTrust(): TrustFiles {
  const directory = mkdtempSync(join(tmpdir(), "ahp-ts-trust-"));
  const write = (file: string, text: string) => {
    const path = join(directory, file);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  };
  const ca = authority("ahp-ts test CA");
  const server = leaf("ahp-ts server", ca, "serverAuth");
  const client = leaf("ahp-ts client", ca, "clientAuth");
  const other = authority("ahp-ts other CA");
  const stranger = leaf("ahp-ts stranger", other, "clientAuth");
  const tokenKey = p256();
  return {
    directory,
    caFile: write("ca.pem", ca.certificate),
    serverCertFile: write("server.pem", server.certificate),
    serverKeyFile: write("server-key.pem", server.key),
    clientCertFile: write("client.pem", client.certificate),
    clientKeyFile: write("client-key.pem", client.key),
    otherCaFile: write("other-ca.pem", other.certificate),
    otherClientCertFile: write("stranger.pem", stranger.certificate),
    otherClientKeyFile: write("stranger-key.pem", stranger.key),
    tokenPublicKeyFile: write(
      "token-public.pem",
      tokenKey.publicKey.export({ type: "spki", format: "pem" }).toString(),
    ),
    tokenPrivateKey: tokenKey.privateKey,
  };
}
