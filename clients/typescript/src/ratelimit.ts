/**
 * The limits an answer announces, read before they bite: the IETF
 * `RateLimit-Policy` and `RateLimit` fields (draft-ietf-httpapi-ratelimit-headers,
 * Structured Field Lists as RFC 9651 has them), the service's hourly work quota
 * (`X-Quota-*`) and `Retry-After`.
 *
 * No Node built-in and no dependency: it runs in browsers too.  A browser page on
 * another origin sees these headers only when the server lists them in
 * Access-Control-Expose-Headers; a header it cannot see reads as absent.
 */

/** A policy (`RateLimit-Policy: "default";q=100;w=60`): `quota` units per `window` seconds. */
export interface RateLimitPolicy {
  name: string;
  quota: number;
  window?: number;
  /** `qu`: what is counted ("requests" when absent) */
  unit?: string;
  /** `pk`: the partition key, as the server sent it (base64) */
  partitionKey?: string;
}

/** What is left of a policy (`RateLimit: "default";r=99;t=42`): `remaining` units, reset in `reset` seconds. */
export interface RateLimitValue {
  name: string;
  remaining: number;
  reset?: number;
  partitionKey?: string;
}

/** The hourly work quota (X-Quota-Kind, -Limit, -Remaining, -Reset in seconds), on answers that charge it. */
export interface QuotaState {
  kind?: string;
  limit?: number;
  remaining?: number;
  reset?: number;
}

export interface RateLimitState {
  policies: RateLimitPolicy[];
  limits: RateLimitValue[];
  quota: QuotaState | null;
  /** Retry-After in seconds (an HTTP date is turned into the seconds from now), or null */
  retryAfter: number | null;
}

type Bare = string | number | boolean | Uint8Array | Token;
type Params = Record<string, Bare>;
/** A member of a Structured Field List: a bare item, or an inner list as an array. */
export interface ListMember {
  value: Bare | { item: Bare; params: Params }[];
  params: Params;
}

/** A Token (unquoted), kept apart from a String as RFC 9651 does. */
export class Token {
  constructor(readonly name: string) {}
  toString(): string {
    return this.name;
  }
}

class Malformed extends Error {}

/** The Structured Field List in `text` (RFC 9651 section 4.2.1), or null if it is malformed (the whole field is then ignored). */
export function parseList(text: string): ListMember[] | null {
  const parser = new Parser(text);
  try {
    return parser.list();
  } catch (error) {
    if (error instanceof Malformed) return null;
    throw error;
  }
}

class Parser {
  private at = 0;

  constructor(private readonly text: string) {}

  list(): ListMember[] {
    const members: ListMember[] = [];
    this.spaces();
    while (this.at < this.text.length) {
      const value = this.peek() === "(" ? this.innerList() : this.bare();
      members.push({ value, params: this.params() });
      this.ows();
      if (this.at >= this.text.length) return members;
      if (this.next() !== ",") throw new Malformed();
      this.ows();
      if (this.at >= this.text.length) throw new Malformed(); // a trailing comma
    }
    return members;
  }

  private innerList(): { item: Bare; params: Params }[] {
    this.next(); // (
    const items: { item: Bare; params: Params }[] = [];
    for (;;) {
      this.spaces();
      if (this.peek() === ")") {
        this.next();
        return items;
      }
      const item = this.bare();
      items.push({ item, params: this.params() });
      const after = this.peek();
      if (after !== " " && after !== ")") throw new Malformed();
    }
  }

  private params(): Params {
    const params: Params = {};
    while (this.peek() === ";") {
      this.next();
      this.spaces();
      const key = this.key();
      let value: Bare = true;
      if (this.peek() === "=") {
        this.next();
        value = this.bare();
      }
      params[key] = value;
    }
    return params;
  }

  private key(): string {
    const match = /^[a-z*][a-z0-9_\-.*]*/.exec(this.text.slice(this.at));
    if (!match) throw new Malformed();
    this.at += match[0].length;
    return match[0];
  }

  private bare(): Bare {
    const rest = this.text.slice(this.at);
    const c = rest[0];
    if (c === '"') return this.string();
    if (c === "?") {
      const match = /^\?([01])/.exec(rest);
      if (!match) throw new Malformed();
      this.at += 2;
      return match[1] === "1";
    }
    if (c === ":") {
      const match = /^:([A-Za-z0-9+/=]*):/.exec(rest);
      if (!match) throw new Malformed();
      this.at += match[0].length;
      return Uint8Array.from(atob(match[1]), (ch) => ch.charCodeAt(0));
    }
    const number = /^-?\d{1,15}(\.\d{1,3})?/.exec(rest);
    if (number) {
      this.at += number[0].length;
      return Number(number[0]);
    }
    const token = /^[A-Za-z*][A-Za-z0-9:/!#$%&'*+\-.^_`|~]*/.exec(rest);
    if (token) {
      this.at += token[0].length;
      return new Token(token[0]);
    }
    throw new Malformed();
  }

  private string(): string {
    this.next(); // "
    let out = "";
    for (;;) {
      const c = this.next();
      if (c === undefined) throw new Malformed();
      if (c === '"') return out;
      if (c === "\\") {
        const escaped = this.next();
        if (escaped !== '"' && escaped !== "\\") throw new Malformed();
        out += escaped;
      } else if (c < " " || c > "~") {
        throw new Malformed();
      } else {
        out += c;
      }
    }
  }

  private peek(): string | undefined {
    return this.text[this.at];
  }

  private next(): string | undefined {
    return this.text[this.at++];
  }

  private spaces(): void {
    while (this.peek() === " ") this.at++;
  }

  private ows(): void {
    while (this.peek() === " " || this.peek() === "\t") this.at++;
  }
}

type HeaderSource = Headers | { headers: Headers };

function headersOf(source: HeaderSource): Headers {
  return typeof (source as Headers).get === "function" ? (source as Headers) : (source as { headers: Headers }).headers;
}

function name(value: ListMember["value"]): string | null {
  if (typeof value === "string") return value;
  if (value instanceof Token) return value.name;
  return null;
}

function integer(value: Bare | undefined): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined;
}

function text(value: Bare | undefined): string | undefined {
  if (typeof value === "string") return value;
  if (value instanceof Token) return value.name;
  if (value instanceof Uint8Array) return btoa(String.fromCharCode(...value));
  return undefined;
}

function members(headers: Headers, field: string): ListMember[] {
  const value = headers.get(field);
  return value === null ? [] : (parseList(value) ?? []);
}

/** The policies of `RateLimit-Policy`: every member with a name and a whole `q`. */
export function rateLimitPolicies(source: HeaderSource): RateLimitPolicy[] {
  const policies: RateLimitPolicy[] = [];
  for (const member of members(headersOf(source), "RateLimit-Policy")) {
    const policy = name(member.value);
    const quota = integer(member.params.q);
    if (policy === null || quota === undefined) continue;
    const window = integer(member.params.w);
    const unit = text(member.params.qu);
    const partitionKey = text(member.params.pk);
    policies.push({
      name: policy,
      quota,
      ...(window !== undefined ? { window } : {}),
      ...(unit !== undefined ? { unit } : {}),
      ...(partitionKey !== undefined ? { partitionKey } : {}),
    });
  }
  return policies;
}

/** What is left, from `RateLimit`: every member with a name and a whole `r`. */
export function rateLimitValues(source: HeaderSource): RateLimitValue[] {
  const limits: RateLimitValue[] = [];
  for (const member of members(headersOf(source), "RateLimit")) {
    const limit = name(member.value);
    const remaining = integer(member.params.r);
    if (limit === null || remaining === undefined) continue;
    const reset = integer(member.params.t);
    const partitionKey = text(member.params.pk);
    limits.push({
      name: limit,
      remaining,
      ...(reset !== undefined ? { reset } : {}),
      ...(partitionKey !== undefined ? { partitionKey } : {}),
    });
  }
  return limits;
}

function whole(value: string | null): number | undefined {
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value.trim()) : undefined;
}

/** The X-Quota-* headers, or null when the answer carries none. */
export function quotaState(source: HeaderSource): QuotaState | null {
  const headers = headersOf(source);
  const quota: QuotaState = {};
  const kind = headers.get("X-Quota-Kind");
  if (kind !== null) quota.kind = kind;
  for (const [key, field] of [["limit", "X-Quota-Limit"], ["remaining", "X-Quota-Remaining"], ["reset", "X-Quota-Reset"]] as const) {
    const value = whole(headers.get(field));
    if (value !== undefined) quota[key] = value;
  }
  return Object.keys(quota).length > 0 ? quota : null;
}

/** Retry-After in seconds (delay-seconds, or an HTTP date from `now`), or null. */
export function retryAfter(source: HeaderSource, now: number = Date.now()): number | null {
  const value = headersOf(source).get("Retry-After");
  if (value === null) return null;
  const seconds = whole(value);
  if (seconds !== undefined) return seconds;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * Everything an answer says of its limits: `rateLimit(answer.response)` after a
 * call, or `error.rateLimit` of a ProblemError.  Absent headers give empty lists
 * and nulls, never an error.
 */
export function rateLimit(source: HeaderSource): RateLimitState {
  return {
    policies: rateLimitPolicies(source),
    limits: rateLimitValues(source),
    quota: quotaState(source),
    retryAfter: retryAfter(source),
  };
}
