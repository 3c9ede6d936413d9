// Who is signed in. Loaded once when the app starts (GET /v1/sessions/current); a sign-in or a
// set-password link replaces it; any request that finds the session over clears it.
import { createContext, useContext, type ReactNode } from 'react';
import type { Role, Session } from './api';

export interface SessionState {
  session: Session;
  setSession: (session: Session | null) => void;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside a signed-in page');
  return state;
}

/** Whether the signed-in member may change things (viewers read only). */
export function useCanChange(): boolean {
  return useSession().session.member.role !== 'viewer';
}

export function useRole(): Role {
  return useSession().session.member.role;
}

export function SessionProvider({ value, children }: { value: SessionState; children: ReactNode }) {
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}
