// @ts-check
// The alarm that revives an evicted service worker and reconnects it (docs/protocol.md §3).

export const KEEPALIVE_ALARM = "tp-keepalive";
const PERIOD_MINUTES = 0.5; // the shortest period Chrome allows

/**
 * Must be called in the worker's first turn: Chrome only wakes a worker for listeners added then.
 * @param {{create(name: string, info: object): unknown, onAlarm: {addListener(fn: (alarm: {name: string}) => void): void}}} alarms
 * @param {() => unknown} onTick
 */
export function registerKeepalive(alarms, onTick) {
  alarms.onAlarm.addListener((alarm) => {
    if (alarm.name === KEEPALIVE_ALARM) onTick();
  });
  alarms.create(KEEPALIVE_ALARM, { periodInMinutes: PERIOD_MINUTES });
}
