/**
 * Search attributes that let the Temporal UI and `temporal workflow list --query` filter builds.
 * They must exist on the server (the dev server started by this project registers them; elsewhere:
 * `temporal operator search-attribute create --name MmifBuildId --type Keyword`, and likewise
 * MmifSource as KeywordList and MmifStatus as Keyword).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const MMIF_BUILD_ID = defineSearchAttributeKey('MmifBuildId', SearchAttributeType.KEYWORD);
export const MMIF_SOURCE = defineSearchAttributeKey('MmifSource', SearchAttributeType.KEYWORD_LIST);
export const MMIF_STATUS = defineSearchAttributeKey('MmifStatus', SearchAttributeType.KEYWORD);

/** `--search-attribute` flags for `temporal server start-dev`. */
export const DEV_SERVER_SEARCH_ATTRIBUTES = ['MmifBuildId=Keyword', 'MmifSource=KeywordList', 'MmifStatus=Keyword'];
