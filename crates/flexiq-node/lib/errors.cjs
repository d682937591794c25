'use strict';
// FlexiqError and the mapping of the addon's errors onto it.
//
// The addon encodes a flexiq error as a tagged JSON message (see src/error.rs); errors napi
// raises while converting arguments (a string where a number was expected, ...) become
// INVALID_ARGUMENT with the original error as their cause.

const TAG = '\u0001flexiq:';

/** Every error flexiq raises: `code` says what went wrong, `cause` carries the chain. */
class FlexiqError extends Error {
  /**
   * @param {string} code e.g. NOT_FOUND, INVALID_ARGUMENT, QUEUE_FULL, CLOSED, TIMEOUT
   * @param {string} message
   * @param {{ cause?: unknown } & Record<string, unknown>} [details]
   */
  constructor(code, message, details = {}) {
    const { cause, ...rest } = details;
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'FlexiqError';
    this.code = code;
    for (const [k, v] of Object.entries(rest)) {
      if (v !== undefined && v !== null) this[k] = v;
    }
  }
}

const CONVERSION_CODES = new Set([
  'InvalidArg',
  'ObjectExpected',
  'StringExpected',
  'NameExpected',
  'FunctionExpected',
  'NumberExpected',
  'BooleanExpected',
  'ArrayExpected',
  'BigintExpected',
  'DateExpected',
  'ArrayBufferExpected',
]);

/** A chain of plain Errors from the innermost message outwards. */
function chain(messages) {
  let cause;
  for (let i = messages.length - 1; i >= 0; i--) {
    cause = new Error(messages[i], cause === undefined ? undefined : { cause });
  }
  return cause;
}

/** The failing job's own error, carrying the handler's stack when it recorded one. */
function jobCause(text) {
  const err = new Error(text.split('\n', 1)[0]);
  err.stack = text;
  return err;
}

/** Turns whatever the addon threw into a FlexiqError. */
function fromNative(e) {
  if (e instanceof FlexiqError) return e;
  const message = e instanceof Error ? e.message : String(e);
  if (message.startsWith(TAG)) {
    let f;
    try {
      f = JSON.parse(message.slice(TAG.length));
    } catch {
      return new FlexiqError('BACKEND', message.slice(TAG.length), { cause: e });
    }
    const { code, message: msg, causes, jobError, ...rest } = f;
    let cause = Array.isArray(causes) ? chain(causes) : undefined;
    if (typeof jobError === 'string') cause = jobCause(jobError);
    const err = new FlexiqError(code, msg, { ...rest, jobError, cause });
    // The stack of the call into the addon, not of this helper.
    if (e instanceof Error && e.stack) err.stack = `FlexiqError: ${msg}\n${e.stack.split('\n').slice(1).join('\n')}`;
    return err;
  }
  if (e instanceof Error && CONVERSION_CODES.has(e.code)) {
    return new FlexiqError('INVALID_ARGUMENT', `invalid argument: ${message}`, { cause: e });
  }
  if (e instanceof TypeError || e instanceof RangeError) {
    return new FlexiqError('INVALID_ARGUMENT', `invalid argument: ${message}`, { cause: e });
  }
  return new FlexiqError('BACKEND', message, { cause: e });
}

/** An INVALID_ARGUMENT error raised by the JS layer itself. */
function invalid(message, cause) {
  return new FlexiqError('INVALID_ARGUMENT', `invalid argument: ${message}`, { cause });
}

/** Runs a synchronous addon call, mapping its error. */
function callSync(fn) {
  try {
    return fn();
  } catch (e) {
    throw fromNative(e);
  }
}

/** Runs an asynchronous addon call (which may also throw synchronously), mapping its error. */
async function callAsync(fn) {
  try {
    return await fn();
  } catch (e) {
    throw fromNative(e);
  }
}

module.exports = { FlexiqError, fromNative, invalid, callSync, callAsync };
