// Signing in, asking for a reset link, and choosing a password from an invitation or reset link.
import { useEffect, useState, type FormEvent } from 'react';
import { api, type Session } from '../api';
import { Link, useLocation } from '../router';
import { ErrorNotice, Field, Loading, Notice, PageTitle, useAction } from '../ui';

interface PublicPageProps {
  onSignedIn: (session: Session) => void;
}

export function SignInPage({ onSignedIn }: PublicPageProps) {
  const { search } = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useAction(async () =>
    onSignedIn(await api<Session>('POST', '/v1/sessions', { body: { email, password } })),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void signIn.run();
  };
  return (
    <div className="card narrow">
      <PageTitle>Sign in to mediajobs</PageTitle>
      {search.get('ended') && <Notice tone="warning">Your session has ended. Sign in again.</Notice>}
      {search.get('signed_out') && <Notice>You are signed out.</Notice>}
      {signIn.error ? <ErrorNotice error={signIn.error} title="Could not sign in" /> : null}
      <form onSubmit={submit}>
        <Field
          id="email"
          label="Email"
          type="email"
          autoComplete="username"
          required
          value={email}
          onChange={setEmail}
        />
        <Field
          id="password"
          label="Password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={setPassword}
        />
        <button type="submit" className="primary" disabled={signIn.busy}>
          {signIn.busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p>
        <Link to="/forgot-password">Forgot your password?</Link>
      </p>
      <p className="hint">
        No account yet? An operator creates it and sends the first owner a link; owners invite everyone else.
      </p>
    </div>
  );
}

export function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const request = useAction(async () => {
    const answer = await api<{ message: string }>('POST', '/v1/password-links', { body: { email } });
    setSent(answer.message);
  });
  return (
    <div className="card narrow">
      <PageTitle>Reset your password</PageTitle>
      {sent ? (
        <Notice tone="success">{sent} The link works once, for 24 hours. Check your inbox (and spam folder).</Notice>
      ) : (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void request.run();
          }}
        >
          <p>
            Enter the email you sign in with. If it belongs to a member, we mail you a link to choose a new password.
          </p>
          {request.error ? <ErrorNotice error={request.error} /> : null}
          <Field
            id="email"
            label="Email"
            type="email"
            autoComplete="username"
            required
            value={email}
            onChange={setEmail}
          />
          <button type="submit" className="primary" disabled={request.busy}>
            Send the link
          </button>
        </form>
      )}
      <p>
        <Link to="/login">Back to sign-in</Link>
      </p>
    </div>
  );
}

interface LinkInfo {
  purpose: 'invite' | 'reset';
  email: string;
  account_name: string;
  role: string;
  expires_at: string;
}

/** The page a set-password link opens; its token is in the fragment, which no server ever sees. */
export function SetPasswordPage({ onSignedIn }: PublicPageProps) {
  const [token] = useState(() => new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '');
  const [info, setInfo] = useState<LinkInfo | null>(null);
  const [problem, setProblem] = useState<unknown>(null);
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [mismatch, setMismatch] = useState(false);

  useEffect(() => {
    if (!token) return;
    api<LinkInfo>('POST', '/v1/password-links/inspect', { body: { token } }).then(setInfo, setProblem);
  }, [token]);

  const save = useAction(async () => {
    const session = await api<Session>('POST', '/v1/password-links/redeem', { body: { token, password } });
    onSignedIn(session);
  });

  if (!token) {
    return (
      <div className="card narrow">
        <PageTitle>Choose a password</PageTitle>
        <p>This page needs the link from your invitation or reset mail. Open the link from the mail again.</p>
        <p>
          <Link to="/forgot-password">Ask for a new link</Link>
        </p>
      </div>
    );
  }
  return (
    <div className="card narrow">
      <PageTitle>Choose a password</PageTitle>
      {problem ? (
        <>
          <ErrorNotice error={problem} title="This link does not work" />
          <p>
            <Link to="/forgot-password">Ask for a new link</Link>
          </p>
        </>
      ) : !info ? (
        <Loading what="your link" />
      ) : (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            if (password !== confirm) return setMismatch(true);
            setMismatch(false);
            void save.run();
          }}
        >
          <p>
            {info.purpose === 'invite' ? (
              <>
                You are joining <strong>{info.account_name}</strong> as <strong>{info.role}</strong>.
              </>
            ) : (
              <>Choose a new password. You will be signed out everywhere else.</>
            )}{' '}
            You sign in as <strong>{info.email}</strong>.
          </p>
          {save.error ? <ErrorNotice error={save.error} title="Could not set the password" /> : null}
          <Field
            id="new-password"
            label="New password"
            type="password"
            autoComplete="new-password"
            minLength={12}
            required
            value={password}
            onChange={setPassword}
            hint="At least 12 characters. A few unrelated words make a strong one."
          />
          <div className="field">
            <label htmlFor="confirm-password">Repeat the password</label>
            <input
              id="confirm-password"
              type="password"
              autoComplete="new-password"
              required
              aria-invalid={mismatch}
              aria-describedby={mismatch ? 'mismatch' : undefined}
              value={confirm}
              onChange={(e) => setConfirm(e.target.value)}
            />
            {mismatch && (
              <p id="mismatch" className="field-error" role="alert">
                The two passwords differ.
              </p>
            )}
          </div>
          <button type="submit" className="primary" disabled={save.busy}>
            Set password and sign in
          </button>
        </form>
      )}
    </div>
  );
}
