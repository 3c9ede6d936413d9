// Success responses in the OpenAPI document. A route names the class that describes its body
// (a response class: plain properties with @ApiProperty, exact nullable/enum/format):
//   @ApiSuccess(201, ApiKeyCreatedResponse)         one object
//   @ApiPage(LedgerEntryResponse)                   200, a page of them (LedgerEntryResponseList)
// The document builder (setup-docs.ts) adds an example to every success response, assembled from
// the properties' examples, and the e2e suites check every body the API sends against the schema
// (test/support/openapi-validation.ts): a field missing from the class fails a test.
import { applyDecorators, type Type } from '@nestjs/common';
import { ApiProperty, ApiResponse } from '@nestjs/swagger';

/** Documents the body of a success status with a response class. */
export function ApiSuccess(status: number, type: Type<unknown>, description = 'Success') {
  return applyDecorators(ApiResponse({ status, type, description }));
}

const pages = new Map<Type<unknown>, Type<unknown>>();

/** The named schema `<Item>List` of a page of items (docs/api-decisions.md §3: object, data, has_more, next_cursor). */
export function pageOf(item: Type<unknown>): Type<unknown> {
  const existing = pages.get(item);
  if (existing) return existing;
  class Page {
    object: 'list';
    data: unknown[];
    has_more: boolean;
    next_cursor: string | null;
  }
  Object.defineProperty(Page, 'name', { value: `${item.name}List` });
  // Explicit types: a class built at run time has no design:type metadata for Nest to read.
  ApiProperty({ type: String, enum: ['list'] })(Page.prototype, 'object');
  ApiProperty({ type: [item], description: 'This page, in the order of the list (newest first).' })(
    Page.prototype,
    'data',
  );
  ApiProperty({ type: Boolean, example: false, description: 'Whether a next page exists.' })(
    Page.prototype,
    'has_more',
  );
  ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'Pass as `starting_after` for the next page; null on the last page.',
  })(Page.prototype, 'next_cursor');
  pages.set(item, Page);
  return Page;
}

/** Documents a 200 answer that is one page of a list (`?limit=`, `?starting_after=`). */
export function ApiPage(item: Type<unknown>, description = 'One page of the list') {
  return ApiSuccess(200, pageOf(item), description);
}

/** Where the document keeps the error object (setup-docs.ts), the same schema as the envelope's `error`. */
export const ERROR_OBJECT_REF = '#/components/schemas/ErrorObject';

/** A property that holds the error object, or null (a job's or item's error, an event's data.error). */
export function ApiErrorObjectOrNull(description: string) {
  return ApiProperty({ oneOf: [{ $ref: ERROR_OBJECT_REF }, { type: 'null' }], description });
}
