// The one rule for a monthly spend cap in a request body (operators and owners set it alike).
import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsNumber, IsOptional, Max, Min, ValidateBy, ValidateIf } from 'class-validator';

/**
 * At most two decimal places. Instead of IsNumber's `maxDecimalPlaces`, which throws (a 500) on a
 * number JavaScript prints in exponent form such as 5e-324: its decimals are counted from the digits.
 */
function HasAtMostCents(): PropertyDecorator {
  return ValidateBy({
    name: 'hasAtMostCents',
    validator: {
      validate: (value: unknown) => {
        if (typeof value !== 'number' || !Number.isFinite(value)) return false;
        const [digits, exponent = '0'] = value.toString().split('e');
        return (digits.split('.')[1]?.length ?? 0) - Number(exponent) <= 2;
      },
      defaultMessage: (args) => `${args?.property ?? 'the value'} must have at most 2 decimal places`,
    },
  });
}

/** `spend_limit_usd`: USD with cents, 0 to 10,000,000, or null for no cap; `required`: the key must be sent. */
export function SpendLimitUsd(options: { required: boolean }): PropertyDecorator {
  return applyDecorators(
    ApiProperty({
      type: Number,
      nullable: true,
      required: options.required,
      minimum: 0,
      maximum: 10_000_000,
      example: 250,
      description: 'Monthly spend cap in USD (cents allowed); null removes it.',
    }),
    ...(options.required ? [IsDefined()] : []),
    ValidateIf((_, value) => value !== null),
    ...(options.required ? [] : [IsOptional()]),
    IsNumber({ allowNaN: false, allowInfinity: false }),
    HasAtMostCents(),
    Min(0),
    Max(10_000_000),
  );
}
