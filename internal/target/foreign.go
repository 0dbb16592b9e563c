package target

// CtrForeignCPUSec is the CPU seconds of the server's backends that serve
// other sessions than ceiling's (other clients of the same server: another
// benchmark, an application), read from /proc for a local server where
// ceiling can tell its own sessions apart (PostgreSQL). It is part of
// CtrServerCPUSec; the per-request CPU cost and the CPU verdict leave it
// out of the server's work for ceiling and count it as other work.
const CtrForeignCPUSec = "foreign_backends_cpu_s"
