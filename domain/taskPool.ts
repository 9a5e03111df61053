/** The task pool of MM-IFEngine (paper Table 6): examples for instruction generation on images without questions. */
interface TaskExample {
  category: string;
  instruction: string;
}

const pool = (category: string, instructions: string[]): TaskExample[] => instructions.map((instruction) => ({ category, instruction }));

export const TASK_POOL: readonly TaskExample[] = [
  ...pool('Descriptive Analysis', [
    "Describe the animal's typical habitat, diet, and one unique behavioral trait.",
    'Provide a detailed analysis of the image, including the setting, characters, and notable objects.',
    'Explain the activity taking place in the image.',
    'Describe the activities of the person on the left in the image.',
  ]),
  ...pool('Emotional & Perspective', [
    'What emotions do you think the person in this image might be feeling?',
    'Imagine you are the person on the left in the scene depicted in this image, write a story about what you would do next.',
    'Personify the sign in the image and express its feelings about the rule it presents.',
  ]),
  ...pool('Creative Writing', [
    'Create a short conversation between any two individuals in the scene.',
    'Pretend this snapshot belongs to a larger story. Write a quick paragraph setting up the next plot twist.',
    'Use this picture as your muse. Craft a brief poem—any style—that captures the emotion you sense.',
    "Turn this scene into a short children's story focusing on wonder and curiosity.",
    'Write a short poem with two stanzas, inspired by the emotion or content depicted in this image.',
  ]),
  ...pool('Social Media & Content', [
    'Assume this is an image you are about to post on Twitter. Please provide a short, upbeat caption describing it.',
    'Assume you are creating a Pinterest pin with this image. Write a short inspirational or motivational caption to accompany it.',
    'If this image were promoting an upcoming event, compose a quick announcement with the date, a highlight of what to expect, and a call-to-action.',
  ]),
  ...pool('Role Play', [
    'Imagine you are the photographer who took this picture. Briefly explain why you chose to capture this particular moment and what story you hope it conveys.',
  ]),
];
