// A fast path for the validation pipe (validation.ts) on hot bodies (a job submit): the DTO's own
// class-validator and class-transformer metadata, read once per class, decide whether a body is
// certainly accepted and build the instance the pipe would return; anything else — every refusal,
// and any body or rule this cannot be sure of — goes through the pipe itself, so every error keeps
// its message and `param`. The rules stay where they are (the DTO's decorators, class-validator's
// own validate functions): this walks them without class-validator's per-request metadata lookups
// and error objects, and without class-transformer's generic copying, which measured as most of the
// pipe's ~150 µs on a submit (bench/profile-submits.ts).
import { TransformationType } from 'class-transformer';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage';
import { getMetadataStorage, ValidationTypes, type ValidationArguments } from 'class-validator';

type Plain = Record<string, unknown>;
/** A DTO class: built with no arguments, as class-transformer builds it. */
export type BodyType = new () => object;
type Validate = (value: unknown, args: ValidationArguments) => unknown;

interface PropertyRule {
  property: string;
  /** @IsOptional and the like: the property's rules apply only when every one holds. */
  conditions: ((object: object, value: unknown) => boolean)[];
  /** @IsDefined and every other rule, each with its class-validator validate function. */
  checks: { each: boolean; constraints: unknown[]; validate: Validate[] }[];
  /** @ValidateNested: the class its value is built as (@Type) and checked against. */
  nested: { accept: () => ClassAcceptor | null } | null;
  /** @Transform functions applied from plain to class. */
  transforms: ((params: {
    value: unknown;
    key: string;
    obj: Plain;
    type: TransformationType;
    options: object;
  }) => unknown)[];
}

interface ClassAcceptor {
  /** The instance, built and checked; undefined when the pipe must decide. */
  build(plain: Plain): object | undefined;
}

const HANDLED = new Set<string>([
  ValidationTypes.IS_DEFINED,
  ValidationTypes.CONDITIONAL_VALIDATION,
  ValidationTypes.CUSTOM_VALIDATION,
  ValidationTypes.NESTED_VALIDATION,
  ValidationTypes.WHITELIST,
]);

const compiled = new Map<BodyType, ClassAcceptor | null>();

/**
 * What the pipe (whitelist, forbidNonWhitelisted, transform, no groups) would return for `value` as a
 * `type`, when it certainly accepts it; undefined otherwise (the pipe then runs and answers). The
 * pipe's own refusals before class-validator (reserved key names, a body that is not JSON) are the
 * caller's to check first.
 */
export function acceptedBody(type: BodyType, value: unknown): object | undefined {
  if (!isPlainObject(value)) return undefined;
  const acceptor = acceptorOf(type);
  return acceptor?.build(value);
}

/** The acceptor of a class, or null when its metadata uses something this does not follow. */
function acceptorOf(type: BodyType): ClassAcceptor | null {
  if (!compiled.has(type)) {
    compiled.set(type, null); // a cycle reads null until it is built
    compiled.set(type, compile(type));
  }
  return compiled.get(type)!;
}

function compile(type: BodyType): ClassAcceptor | null {
  const metadatas = getMetadataStorage().getTargetValidationMetadatas(type, '', false, false, undefined);
  if (!metadatas.length) return null; // forbidUnknownValues refuses it
  if (defaultMetadataStorage.getStrategy(type) !== 'none') return null;
  const grouped = getMetadataStorage().groupByPropertyName(metadatas);
  const rules: PropertyRule[] = [];
  for (const [property, list] of Object.entries(grouped)) {
    if (list.some((metadata) => !HANDLED.has(metadata.type))) return null;
    if (defaultMetadataStorage.findExcludeMetadata(type, property)) return null;
    if (defaultMetadataStorage.findExposeMetadata(type, property)) return null;
    const rule: PropertyRule = { property, conditions: [], checks: [], nested: null, transforms: [] };
    for (const metadata of list) {
      if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION) {
        rule.conditions.push(metadata.constraints[0] as (object: object, value: unknown) => boolean);
      } else if (metadata.type === ValidationTypes.IS_DEFINED || metadata.type === ValidationTypes.CUSTOM_VALIDATION) {
        const constraints = getMetadataStorage().getTargetValidatorConstraints(metadata.constraintCls);
        if (!constraints.length || constraints.some((constraint) => constraint.async)) return null;
        rule.checks.push({
          each: metadata.each === true,
          constraints: metadata.constraints,
          validate: constraints.map((constraint) => {
            const instance = constraint.instance as { validate: Validate };
            return (value, args) => instance.validate(value, args);
          }),
        });
      } else if (metadata.type === ValidationTypes.NESTED_VALIDATION) {
        const typed = defaultMetadataStorage.findTypeMetadata(type, property);
        if (!typed || typed.options?.discriminator) return null;
        rule.nested = { accept: () => acceptorOf(typed.typeFunction() as BodyType) };
      }
    }
    // @Type without @ValidateNested: class-transformer would build a class nothing checks.
    if (!rule.nested && defaultMetadataStorage.findTypeMetadata(type, property)) return null;
    rule.transforms = defaultMetadataStorage
      .findTransformMetadatas(type, property, TransformationType.PLAIN_TO_CLASS)
      .map((metadata) => metadata.transformFn as PropertyRule['transforms'][number]);
    rules.push(rule);
  }
  const known = new Set(rules.map((rule) => rule.property));
  // A declared field without a rule would be refused by the whitelist on every instance.
  if (Object.keys(new type()).some((key) => !known.has(key))) return null;
  const byName = new Map(rules.map((rule) => [rule.property, rule]));
  return {
    build(plain) {
      const entity = new type() as Plain;
      for (const key of Object.keys(plain)) {
        const rule = byName.get(key);
        if (!rule) return undefined; // forbidNonWhitelisted
        const value = converted(rule, plain[key], plain);
        if (value === FAILED) return undefined;
        entity[key] = value;
      }
      for (const rule of rules) {
        if (!holds(rule, entity[rule.property], entity, type.name)) return undefined;
      }
      return entity;
    },
  };
}

const FAILED = Symbol('failed');

/** The property's value as class-transformer would build it; FAILED when this does not follow it. */
function converted(rule: PropertyRule, value: unknown, plain: Plain): unknown {
  if (value === null || value === undefined) return value;
  if (rule.nested) {
    const acceptor = rule.nested.accept();
    if (!acceptor) return FAILED;
    const one = (item: unknown): unknown => (isPlainObject(item) ? (acceptor.build(item) ?? FAILED) : FAILED);
    if (!Array.isArray(value)) return one(value);
    const items: unknown[] = [];
    for (const item of value) {
      const built = one(item);
      if (built === FAILED) return FAILED;
      items.push(built);
    }
    return items;
  }
  if (rule.transforms.length) {
    let result: unknown = value;
    for (const transform of rule.transforms) {
      result = transform({
        value: result,
        key: rule.property,
        obj: plain,
        type: TransformationType.PLAIN_TO_CLASS,
        options: {},
      });
    }
    return result;
  }
  // class-transformer copies objects and arrays on its own terms: left to the pipe.
  return typeof value === 'object' ? FAILED : value;
}

/** class-validator's verdict on one property (ValidationExecutor.performValidations), as a boolean. */
function holds(rule: PropertyRule, value: unknown, entity: object, targetName: string): boolean {
  for (const condition of rule.conditions) if (!condition(entity, value)) return true;
  const args: ValidationArguments = { targetName, property: rule.property, object: entity, value, constraints: [] };
  for (const check of rule.checks) {
    args.constraints = check.constraints;
    for (const validate of check.validate) {
      if (check.each && Array.isArray(value)) {
        if (!value.every((item) => validate(item, args) === true)) return false;
      } else if (validate(value, args) !== true) return false;
    }
  }
  // Nested values were built (and checked) by `converted`; a missing one is refused by class-validator.
  if (rule.nested && (value === null || typeof value !== 'object')) return false;
  return true;
}

function isPlainObject(value: unknown): value is Plain {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  return Object.getPrototypeOf(value) === Object.prototype;
}
