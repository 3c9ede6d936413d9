// Remembers every registered route so that a request with the wrong method can be told which
// methods the path does accept (405 method_not_allowed with Allow) instead of a bare 404.
export class RouteTable {
  private readonly routes: { method: string; pattern: RegExp }[] = [];

  add(methods: string | string[], url: string): void {
    const source = url
      .split('/')
      .map((segment) =>
        segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
      )
      .join('/');
    const pattern = new RegExp(`^${source}/?$`);
    for (const method of Array.isArray(methods) ? methods : [methods]) this.routes.push({ method, pattern });
  }

  /** Methods registered for this path; empty when no route matches it at all. */
  allowedMethods(path: string): string[] {
    const methods = new Set<string>();
    for (const route of this.routes) if (route.pattern.test(path)) methods.add(route.method);
    return [...methods].filter((method) => method !== 'HEAD').sort();
  }
}
