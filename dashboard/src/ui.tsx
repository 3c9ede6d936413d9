// Shared pieces of every page: errors in words, empty states, progress, confirmations, copying.
import { useCallback, useEffect, useId, useRef, useState, type InputHTMLAttributes, type ReactNode } from 'react';
import { ApiFailure, type ErrorObject } from './api';
import { STATUS_LABELS } from './format';
import { errorWording } from './outcomes';

/**
 * An error envelope for a person: what happened in words, then its code, field and reference link.
 * Title and colour come from the catalogue's family (outcomes.ts), never from the HTTP status.
 */
export function ErrorNotice({ error, title }: { error: unknown; title?: string }) {
  const envelope: ErrorObject | null = error instanceof ApiFailure ? error.error : isErrorObject(error) ? error : null;
  const message = envelope?.message ?? (error instanceof Error ? error.message : 'Something went wrong. Try again.');
  const wording = errorWording(envelope);
  // insufficient_credits names the operator's top-up page when there is one (BILLING_TOPUP_URL).
  const topup = envelope?.details?.topup_url;
  return (
    <div
      className={`notice notice-${wording.tone}`}
      role={wording.failure === false ? 'status' : 'alert'}
      data-family={envelope?.type}
    >
      <p className="notice-title">{title ?? wording.title}</p>
      <p>{message}</p>
      {envelope?.retryable && <p>This can work if you try again.</p>}
      {typeof topup === 'string' && /^https?:\/\//.test(topup) && (
        <p>
          <a href={topup} target="_blank" rel="noopener noreferrer">
            Buy credits
          </a>{' '}
          (opens your provider’s top-up page)
        </p>
      )}
      {envelope && (
        <p className="notice-meta">
          Code <code>{envelope.code}</code>
          {envelope.param && (
            <>
              {' '}
              · field <code>{envelope.param}</code>
            </>
          )}{' '}
          ·{' '}
          <a href={envelope.doc_url} target="_blank" rel="noreferrer">
            What {envelope.code} means
          </a>{' '}
          · request <code className="id">{envelope.request_id}</code>
        </p>
      )}
    </div>
  );
}

function isErrorObject(value: unknown): value is ErrorObject {
  return typeof value === 'object' && value !== null && 'code' in value && 'doc_url' in value;
}

export function Notice({ children, tone = 'info' }: { children: ReactNode; tone?: 'info' | 'success' | 'warning' }) {
  return (
    <div className={`notice notice-${tone}`} role="status">
      {children}
    </div>
  );
}

/** What to do next when there is nothing to show. */
export function EmptyState({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{title}</p>
      <div>{children}</div>
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status">
      Loading {what}…
    </p>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status}`}>{STATUS_LABELS[status] ?? status}</span>;
}

/** A native progress bar with its value in words beside it. */
export function Progress({ label, value, max, text }: { label: string; value: number; max: number; text: string }) {
  return (
    <div className="progress">
      <progress aria-label={label} value={value} max={max} />
      <span className="progress-text">{text}</span>
    </div>
  );
}

/** A secret shown once: read-only, selectable, with a copy button. */
export function SecretOnce({ label, value, note }: { label: string; value: string; note: string }) {
  const [copied, setCopied] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const id = useId();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // No clipboard permission (or no secure context): copy the selection the old way.
      input.current?.select();
      document.execCommand('copy');
    }
    setCopied(true);
  };
  return (
    <div className="secret">
      <label htmlFor={id}>{label}</label>
      <div className="secret-row">
        <input id={id} ref={input} readOnly value={value} onFocus={(event) => event.target.select()} />
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      <p className="hint">
        {note} {copied && <span role="status">Copied.</span>}
      </p>
    </div>
  );
}

/** A confirmation that takes focus (native modal dialog) and says what will happen. */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  dismissLabel,
  danger,
  busy,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  /** What the other button keeps ("Keep job"): never a bare "Cancel" beside "Cancel job". */
  dismissLabel: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) element.showModal();
    if (!open && element.open) element.close();
  }, [open]);
  return (
    <dialog ref={dialog} aria-labelledby={titleId} onCancel={onCancel}>
      <h2 id={titleId}>{title}</h2>
      <div>{children}</div>
      <div className="actions">
        <button type="button" onClick={onCancel} disabled={busy}>
          {dismissLabel}
        </button>
        <button type="button" className={danger ? 'danger' : 'primary'} onClick={onConfirm} disabled={busy}>
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

export interface Loaded<T> {
  data: T | null;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads with `load` when `key` changes; with `pollMs`, loads again on that period while
 * `keepPolling(data)` holds (live progress), and stops on unmount.
 */
export function useLoad<T>(
  key: string,
  load: () => Promise<T>,
  options: { pollMs?: number; keepPolling?: (data: T) => boolean } = {},
): Loaded<T> {
  const [state, setState] = useState<{ key: string; data: T | null; error: unknown; loading: boolean }>({
    key,
    data: null,
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const optionsRef = useRef(options);
  optionsRef.current = options;

  useEffect(() => {
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const data = await loadRef.current();
        if (cancelled) return;
        setState({ key, data, error: null, loading: false });
        const { pollMs, keepPolling } = optionsRef.current;
        if (pollMs && keepPolling?.(data)) timer = setTimeout(() => void run(), pollMs);
      } catch (error) {
        if (!cancelled)
          setState((previous) => ({ key, data: previous.key === key ? previous.data : null, error, loading: false }));
      }
    };
    setState((previous) => ({ ...previous, loading: true }));
    void run();
    return () => {
      cancelled = true;
      if (timer) clearTimeout(timer);
    };
  }, [key, tick]);

  const reload = useCallback(() => setTick((value) => value + 1), []);
  const fresh = state.key === key;
  return {
    data: fresh ? state.data : null,
    error: fresh ? state.error : null,
    loading: state.loading || !fresh,
    reload,
  };
}

/** Runs an action, keeping its failure to show and a busy flag for the button. */
export function useAction<A extends unknown[], R>(action: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(
    async (...args: A): Promise<R | undefined> => {
      setBusy(true);
      setError(null);
      try {
        return await action(...args);
      } catch (failure) {
        setError(failure);
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [action],
  );
  return { run, busy, error, clearError: () => setError(null) };
}

/** Moves focus to the page's heading when the page changes, so screen readers announce it. */
export function PageTitle({ children }: { children: ReactNode }) {
  const heading = useRef<HTMLHeadingElement>(null);
  // "Job {id}" arrives as ['Job ', id]: its text is the tab's title too. Keyed by the text, not by
  // the children array (new at every render), so a page that re-renders keeps the focus where it is.
  const parts = Array.isArray(children) ? children : [children];
  const text = parts.every((part) => typeof part === 'string' || typeof part === 'number') ? parts.join('') : null;
  useEffect(() => {
    heading.current?.focus();
    if (text !== null) document.title = `${text} · mediajobs dashboard`;
  }, [text]);
  return (
    <h1 ref={heading} tabIndex={-1}>
      {children}
    </h1>
  );
}

/** A labelled input (the label names it for assistive technology and for tests alike). */
export function Field({
  id,
  label,
  value,
  onChange,
  hint,
  ...input
}: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  hint?: ReactNode;
} & Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'value' | 'onChange'>) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        aria-describedby={hint ? `${id}-hint` : undefined}
        {...input}
      />
      {hint && (
        <p id={`${id}-hint`} className="hint">
          {hint}
        </p>
      )}
    </div>
  );
}

/** Checkboxes choosing a subset of `options` (scopes, events). */
export function CheckboxGroup({
  legend,
  idPrefix,
  options,
  chosen,
  onChange,
  describe,
}: {
  legend: string;
  idPrefix: string;
  options: readonly string[];
  chosen: string[];
  onChange: (chosen: string[]) => void;
  describe?: (option: string) => ReactNode;
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {options.map((option) => (
        <div key={option} className="check">
          <input
            id={`${idPrefix}-${option}`}
            type="checkbox"
            checked={chosen.includes(option)}
            onChange={(event) =>
              onChange(event.target.checked ? [...chosen, option] : chosen.filter((other) => other !== option))
            }
          />
          <label htmlFor={`${idPrefix}-${option}`}>
            <code>{option}</code>
            {describe && <span className="hint"> — {describe(option)}</span>}
          </label>
        </div>
      ))}
    </fieldset>
  );
}
