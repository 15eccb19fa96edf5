/**
 * Whether a process with this pid exists on this machine. EPERM means it exists but belongs to another
 * user, which is still alive for our purposes (a lock or temporary file of theirs must be respected).
 */
export function isProcessAlive(pid: number): boolean {
    if (!Number.isInteger(pid) || pid <= 0) return false;
    try {
        process.kill(pid, 0);
        return true;
    } catch (error) {
        return (error as NodeJS.ErrnoException).code === "EPERM";
    }
}
