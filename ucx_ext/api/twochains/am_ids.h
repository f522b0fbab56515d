/**
 * Copyright (C) 2026 The Two-Chains authors. See file LICENSE for terms.
 *
 * The UCP active-message ids this project registers on a worker, in one
 * place: UCP keeps one handler per id and worker, so two subsystems that
 * picked the same id would silently take each other's messages. An
 * application that registers its own active-message handlers on the same
 * worker keeps clear of these.
 */
#ifndef TWOCHAINS_AM_IDS_H_
#define TWOCHAINS_AM_IDS_H_

/** A mailbox's control messages: ring request, grant, sleep, doorbell */
#define TC_IFUNC_CONTROL_AM_ID   0x7a

/** The collectives of a group's members (group creation among them only) */
#define TC_MEMBER_CHANNEL_AM_ID  0x7b

/** The write lane: stores into a peer's registered region, where UCP
 *  emulates puts */
#define TC_WRITE_LANE_AM_ID      0x7c

#endif
