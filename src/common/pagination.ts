import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';

/** `?limit=` (1–100) and `?starting_after=` as in docs/api-decisions.md §3. */
export class ListQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size.' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional({
    description: 'The `next_cursor` of the previous page (an id); leave out for the first page.',
  })
  @IsOptional()
  @IsString()
  @Matches(/^[a-z]+_[0-9A-Za-z]{1,64}$/, { message: 'starting_after must be an id from a previous page' })
  starting_after?: string;
}

export interface ListResponse<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Builds a page from rows fetched with `limit + 1`, so has_more needs no count query. */
export function toList<T>(rows: T[], limit: number, idOf: (row: T) => string): ListResponse<T> {
  const data = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return { object: 'list', data, has_more: hasMore, next_cursor: hasMore ? idOf(data[data.length - 1]) : null };
}
