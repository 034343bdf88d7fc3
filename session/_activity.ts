// One activity touch per tool exchange: the act path's writer marks the request message of an
// exchange, and the branch tells `persistMessage` (payload `touchActivity: false`) that the
// response written with it touches the session's activity for both.

/** The `addMessage` option key the exchange writer sets on the request message. */
export const ACTIVITY_WITH_NEXT: unique symbol = Symbol("hookscope.activityWithNext");
