// @ts-check
// The person's Stop and Resume (in a page or the popup), wired to the daemon and the dispatcher.
import { RpcError } from "../link/protocol.js";

/**
 * Stop: the daemon ends the session's running and queued calls and pauses it; what runs here ends at once
 * rather than when the daemon's cancel arrives. Resume tells the daemon the person let the agent go on.
 * @param {{overlay: {onStop: (f: (sessionId: string) => void) => void, onResume: (f: (sessionId: string) => void) => void},
 *          emit: (name: string, payload: Record<string, unknown>) => void,
 *          abortSession: (sessionId: string, reason: RpcError) => void}} deps
 */
export function wireStop({ overlay, emit, abortSession }) {
  overlay.onStop((sessionId) => {
    emit("session.user_interrupt", { session_id: sessionId });
    abortSession(
      sessionId,
      new RpcError("user_aborted", "stopped: the person pressed Stop", "user_interrupt", {
        hint: "the person stopped you; ask them before continuing, then run `tabpilot session resume`",
      }),
    );
  });
  overlay.onResume((sessionId) => emit("session.user_resume", { session_id: sessionId }));
}
