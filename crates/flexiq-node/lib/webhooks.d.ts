// Types of `flexiq/webhooks`: verifying the signature of a webhook delivery.

/** The header carrying the signature: `t=<unix seconds>,v1=<hex>[,v1=<hex>]`. */
export declare const SIGNATURE_HEADER: 'flexiq-signature';

/** Seconds the signed timestamp may differ from now by default (300). */
export declare const DEFAULT_TOLERANCE_SECS: number;

/** How {@link verifySignature} judges the timestamp. */
export interface VerifyOptions {
  /** Largest difference between the signed timestamp and now, in seconds (default 300). */
  toleranceSecs?: number;
  /** Now, in Unix seconds (default the wall clock). */
  nowSecs?: number;
}

/**
 * Checks a delivery: `payload` is the raw request body, `header` the `flexiq-signature`
 * value, `secrets` one secret or several (any may match, as during a rotation). Returns the
 * signed timestamp (Unix seconds); throws a `FlexiqError` with code `INVALID_ARGUMENT` saying
 * which check failed.
 */
export declare function verifySignature(
  payload: string | Uint8Array,
  header: string,
  secrets: string | Uint8Array | Array<string | Uint8Array>,
  options?: VerifyOptions,
): number;
