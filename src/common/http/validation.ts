import {
  ValidationPipe,
  type ArgumentMetadata,
  type ValidationError,
  type ValidationPipeOptions,
} from '@nestjs/common';
import { ApiError } from '../errors/api-error';
import { acceptedBody, type BodyType } from './accepted-body';

interface Violation {
  path: string;
  error: ValidationError;
}

function firstViolation(errors: ValidationError[], parent = ''): Violation | undefined {
  for (const error of errors) {
    const path = /^\d+$/.test(error.property)
      ? `${parent}[${error.property}]`
      : parent
        ? `${parent}.${error.property}`
        : error.property;
    if (error.constraints && Object.keys(error.constraints).length) return { path, error };
    const nested = firstViolation(error.children ?? [], path);
    if (nested) return nested;
  }
  return undefined;
}

/** The first validation failure as an ApiError whose `param` is the field's path, e.g. `inputs[0].source_url`. */
export function validationErrorToApiError(errors: ValidationError[]): ApiError {
  const violation = firstViolation(errors);
  if (!violation) return new ApiError('invalid_parameter');
  const { path, error } = violation;
  const constraints = error.constraints ?? {};
  if (constraints.whitelistValidation) {
    return new ApiError('invalid_parameter', {
      param: path,
      message: `Unknown parameter: ${path}. Remove it from the request.`,
    });
  }
  if (error.value === undefined || error.value === null || constraints.isDefined) {
    return new ApiError('missing_parameter', { param: path, message: `Missing required parameter: ${path}.` });
  }
  const reason = Object.values(constraints)[0];
  return new ApiError('invalid_parameter', { param: path, message: `Invalid value for ${path}: ${reason}.` });
}

/** Keys Nest's pipe deletes from every object it validates (prototype-pollution guard). */
const STRIPPED_KEYS = ['__proto__', 'constructor', 'prototype'];

/** The path of the first own key named like STRIPPED_KEYS anywhere in `value`, or null. */
export function strippedKeyPath(value: unknown): string | null {
  const stack: { node: unknown; path: string }[] = [{ node: value, path: '' }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      node.forEach((child, index) => stack.push({ node: child, path: `${path}[${index}]` }));
      continue;
    }
    for (const [key, child] of Object.entries(node)) {
      const childPath = path ? `${path}.${key}` : key;
      if (STRIPPED_KEYS.includes(key)) return childPath;
      stack.push({ node: child, path: childPath });
    }
  }
  return null;
}

/**
 * Nest's pipe silently deletes `constructor` and `prototype` keys at every depth, so a client's
 * `metadata: {constructor: "…"}` would vanish without a word. Refused instead, with the key's path.
 */
/**
 * A body sent as a form or as text/plain, kept unparsed (src/http-app.ts). Refused with 415 here, at the
 * request-shape step (docs/api-decisions.md §2), rather than at parse time: parsing runs before the access guard, so a
 * refusal there would answer a cross-origin form post (the classic CSRF) with 415 instead of the
 * 403 `csrf_check_failed` the session check owes it, and an unauthenticated caller with 415 before 401.
 */
export class NotJsonBody {
  constructor(readonly message: string) {}
}

class RefusingValidationPipe extends ValidationPipe {
  constructor(
    options: ValidationPipeOptions,
    /** A body type whose accepted bodies skip class-validator and class-transformer (accepted-body.ts). */
    private readonly fastType?: BodyType,
  ) {
    super(options);
  }

  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (value instanceof NotJsonBody)
      throw new ApiError('unsupported_content_type', { param: 'Content-Type', message: value.message });
    if (this.fastType && metadata.type === 'body' && strippedKeyPath(value) === null) {
      const accepted = acceptedBody(this.fastType, value);
      if (accepted) return Promise.resolve(accepted);
    }
    return super.transform(value, metadata);
  }

  protected override stripProtoKeys(value: unknown): void {
    const path = strippedKeyPath(value);
    if (path !== null) {
      throw new ApiError('invalid_parameter', {
        param: path,
        message: `The key name at ${path} is reserved (__proto__, constructor and prototype are not accepted as keys): rename it.`,
      });
    }
    super.stripProtoKeys(value);
  }
}

/**
 * The global pipe; with `expectedType` for a parameter whose declared type is a union. `fast`: a hot
 * body (a job submit) whose accepted values are built from the type's metadata without running
 * class-validator (accepted-body.ts); any other value still goes through the pipe.
 */
export function createValidationPipe(
  expectedType?: ValidationPipeOptions['expectedType'],
  options: { fast?: boolean } = {},
): ValidationPipe {
  return new RefusingValidationPipe(
    {
      expectedType,
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      stopAtFirstError: true,
      validationError: { target: false, value: true },
      exceptionFactory: validationErrorToApiError,
    },
    options.fast && typeof expectedType === 'function' ? (expectedType as BodyType) : undefined,
  );
}

/** Deepest nesting of arrays and objects a JSON body may have (ours need 3; class-transformer recurses). */
export const MAX_JSON_DEPTH = 32;

/** True when `value` nests arrays/objects deeper than `max` levels; iterative, so any depth is safe. */
export function jsonDeeperThan(value: unknown, max: number): boolean {
  const stack: { node: unknown; depth: number }[] = [{ node: value, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push({ node: child, depth: depth + 1 });
  }
  return false;
}

/** A UTF-16 surrogate without its pair: JSON allows it ("\ud800"), Unicode text (and PostgreSQL) does not. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Where `value` holds a string (or an object key) that is not well-formed Unicode: the path of the
 * value, or of the object whose key it is (`''` for the body itself); null when there is none.
 */
export function illFormedTextPath(value: unknown): { path: string; inKey: boolean } | null {
  const stack: { node: unknown; path: string }[] = [{ node: value, path: '' }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (typeof node === 'string') {
      if (LONE_SURROGATE.test(node)) return { path, inKey: false };
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      node.forEach((child, index) => stack.push({ node: child, path: `${path}[${index}]` }));
      continue;
    }
    for (const [key, child] of Object.entries(node)) {
      if (LONE_SURROGATE.test(key)) return { path, inKey: true };
      stack.push({ node: child, path: path ? `${path}.${key}` : key });
    }
  }
  return null;
}
