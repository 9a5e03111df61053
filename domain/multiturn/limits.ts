/** Seed 002's chats run to 20 question turns with at most 6 instructions. Pure: the workflow bundle imports it (through config/). */
export const MAX_CHAT_TURNS = 20;
export const MAX_CHAT_INSTRUCTIONS = 6;
