/** How core tells the editor what happened; the server façade implements it with ECA notifications. */
import type { ChatContent, Role } from '../protocol/eca/content.js';
import type { ChatStatus } from '../protocol/eca/chat.js';

export interface ChatEvents {
  content(chatId: string, role: Role, content: ChatContent): void;
  status(chatId: string, status: ChatStatus): void;
  opened(chatId: string, title?: string): void;
  cleared(chatId: string): void;
  deleted(chatId: string): void;
  showMessage(type: 'error' | 'warning' | 'info', message: string): void;
  /**
   * Runs `fn`, sending what it emits to the editor in one write (one wake-up of the editor per
   * burst instead of one per message). Optional: without it, `fn` simply runs.
   */
  together?(fn: () => void): void;
}
