import * as React from 'react';

/**
 * Whole seconds from `since` (an ISO 8601 time the server stamped) to now, counted again
 * every second while the component is mounted; null when `since` is not a time. Never
 * negative: a browser clock a little behind the server's reads 0, not a time to come.
 */
export function useSecondsSince(since: string): number | null {
  const start = Date.parse(since);
  const known = Number.isFinite(start);
  const [now, setNow] = React.useState(() => Date.now());
  React.useEffect(() => {
    if (!known) {
      return;
    }
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [known]);
  return known ? Math.max(0, Math.floor((now - start) / 1000)) : null;
}
