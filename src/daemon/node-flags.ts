/**
 * Node options the daemon runs with (`placemat daemon start` passes them; `npm start` and the
 * `placemat` executable's #! line say the same).
 * A young generation of up to 64 MiB per semi-space: loading a million providers creates
 * millions of short-lived row values, and with Node's default (16 MiB) most of the start-up
 * went to scavenging them (17 s against 11 s at 1M providers on the 2-core reference machine).
 */
export const DAEMON_NODE_OPTIONS = ['--max-semi-space-size=64']
