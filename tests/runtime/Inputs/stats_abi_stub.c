/* stats_abi_stub.c -- stands in for a libfusert.so.0.2 built before its
 * symbols had versions: stats_abi_old links against it. */
struct old_stats;
void fusert_get_cache_stats(struct old_stats *out);
void fusert_get_cache_stats(struct old_stats *out) { (void)out; }
