import { ValidationPipe, type ValidationError, type ValidationPipeOptions } from '@nestjs/common';
import { ApiError } from '../errors/api-error';

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

/** The global pipe; with `expectedType` for a parameter whose declared type is a union. */
export function createValidationPipe(expectedType?: ValidationPipeOptions['expectedType']): ValidationPipe {
  return new ValidationPipe({
    expectedType,
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: true,
    validationError: { target: false, value: true },
    exceptionFactory: validationErrorToApiError,
  });
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
